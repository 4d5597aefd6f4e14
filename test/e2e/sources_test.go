package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// The manifest path of a config-management run or a late mount: the agent starts before the
// directory exists (a warning names it, on the Node too), picks it up when it is created 5 s
// later within one file-check period, keeps its pods while it is missing for a moment (the
// directory replaced by a symlink to it), and follows the symlink when it is switched
// atomically to another directory (`ln -sfn new tmp && mv -T tmp path`): the new directory's
// pods run, the old one's stop.
func TestManifestPathAppearsVanishesAndMoves(t *testing.T) {
	const checkPeriod = 3 * time.Second
	root := t.TempDir()
	path := filepath.Join(root, "manifests")
	start := time.Now()
	a := startAgent(t, agentOptions{extraArgs: []string{
		"--pod-manifest-path", path, "--file-check-frequency", checkPeriod.String(),
	}})

	// The start-up line says what the agent is: its mode, provider and kubelet API address.
	startup := a.logLine(` mode="`)
	assert.Contains(t, startup, `mode="API server https://`)
	assert.Contains(t, startup, `provider="mock"`)
	assert.Contains(t, startup, `kubeletAPI="https://127.0.0.1:`+strconv.Itoa(a.APIPort)+`"`)

	// Missing: one warning naming the path and the reason, and a Warning event on the Node.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Contains(c, a.logLine("Manifest source unavailable"), "stat "+path+": no such file or directory")
	}, 10*time.Second, 50*time.Millisecond, "a warning names the missing path")
	a.nodeEvent("ManifestSourceUnavailable", path)

	// Created 5 s after the start, as a late configuration run would: the mirror is Running
	// within one file-check period (the watch on the parent sees it at once).
	time.Sleep(time.Until(start.Add(5 * time.Second))) // the scenario's delay, not a wait for anything
	assert.Equal(t, 1, strings.Count(a.log(), "Manifest source unavailable"), "said once, not once per re-list")
	// The directory appears with its manifest in it (renamed into place), so that the one line
	// counting the pods sees it: a directory created empty would be listed, and counted, empty.
	staging := filepath.Join(root, ".manifests.new")
	require.NoError(t, os.Mkdir(staging, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(staging, "a.yaml"), []byte(manifest("a", "nginx:1")), 0o644))
	require.NoError(t, os.Rename(staging, path))
	created := time.Now()
	mirrorA := a.runningMirrorWithin("a", checkPeriod)
	t.Logf("directory created → mirror Running: %s", time.Since(created))
	a.nodeEvent("ManifestSourceAvailable", path)
	assert.Contains(t, a.logLine("Every pod source seen"), "file=1", "one line counts the pods from each source")

	// From here on, the mirror of a must not be deleted until the switch.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := env.Admin.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{
		FieldSelector: "metadata.name=" + mirrorA.Name, ResourceVersion: mirrorA.ResourceVersion,
	})
	require.NoError(t, err)
	defer w.Stop()

	// The directory becomes a symlink to itself moved away: missing for a moment.
	v1 := filepath.Join(root, "v1")
	require.NoError(t, os.Rename(path, v1))
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, 2, strings.Count(a.log(), "Manifest source unavailable"))
	}, 10*time.Second, 20*time.Millisecond, "the moment it is missing is seen")
	require.NoError(t, os.Symlink("v1", path))
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, 2, strings.Count(a.log(), "Manifest source available again"))
	}, 10*time.Second, 20*time.Millisecond, "back")
	// For a re-list period, the mirror is not touched; then a is as it was: the same mirror.
	noDeletion(t, w, checkPeriod)
	assert.Equal(t, mirrorA.UID, a.runningMirror("a", "nginx:1").UID)

	// Switched atomically to v2, which has b only.
	v2 := filepath.Join(root, "v2")
	require.NoError(t, os.Mkdir(v2, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(v2, "b.yaml"), []byte(manifest("b", "nginx:1")), 0o644))
	sh := exec.Command("sh", "-c", "ln -sfn v2 manifests.tmp && mv -T manifests.tmp manifests")
	sh.Dir = root
	out, err := sh.CombinedOutput()
	require.NoError(t, err, "%s", out)
	switched := time.Now()
	a.runningMirrorWithin("b", checkPeriod)
	a.mirrorGone("a")
	t.Logf("switched → b Running and a gone: %s", time.Since(switched))
	assert.Equal(t, 2, strings.Count(a.log(), "Manifest source unavailable"), "an atomic switch is never missing")
}

// log is the agent's log so far.
func (a *agent) log() string {
	data, err := os.ReadFile(a.LogPath)
	require.NoError(a.t, err)
	return string(data)
}

// logLine is the first line of the agent's log that contains text ("" if none).
func (a *agent) logLine(text string) string {
	for _, line := range strings.Split(a.log(), "\n") {
		if strings.Contains(line, text) {
			return line
		}
	}
	return ""
}

// runningMirrorWithin waits at most within for the mirror of static pod name to be Running.
func (a *agent) runningMirrorWithin(name string, within time.Duration) *corev1.Pod {
	a.t.Helper()
	var mirror *corev1.Pod
	require.EventuallyWithT(a.t, func(c *assert.CollectT) {
		p, err := env.Admin.CoreV1().Pods("default").Get(context.Background(), name+"-"+a.Node, metav1.GetOptions{})
		require.NoError(c, err)
		assert.Nil(c, p.DeletionTimestamp)
		assert.Equal(c, corev1.PodRunning, p.Status.Phase)
		mirror = p
	}, within, 20*time.Millisecond, "mirror %s Running within %s", name, within)
	return mirror
}

// nodeEvent waits for an event on the agent's Node with reason whose message contains text.
func (a *agent) nodeEvent(reason, text string) {
	a.t.Helper()
	require.EventuallyWithT(a.t, func(c *assert.CollectT) {
		evs, err := env.Admin.CoreV1().Events("default").List(context.Background(), metav1.ListOptions{
			FieldSelector: "involvedObject.kind=Node,involvedObject.name=" + a.Node + ",reason=" + reason})
		require.NoError(c, err)
		for _, e := range evs.Items {
			if strings.Contains(e.Message, text) {
				return
			}
		}
		c.Errorf("no %s event names %s among %d", reason, text, len(evs.Items))
	}, 10*time.Second, 50*time.Millisecond, reason+" event naming "+text)
}

// noDeletion watches the pod for d more, and fails the test if it is deleted or being deleted,
// now or since the watch started.
func noDeletion(t *testing.T, w watch.Interface, d time.Duration) {
	t.Helper()
	timeout := time.After(d)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			require.True(t, ok, "the watch ended")
			p, _ := ev.Object.(*corev1.Pod)
			if ev.Type == watch.Deleted || (p != nil && p.DeletionTimestamp != nil) {
				t.Fatalf("the mirror was deleted while the directory was missing for a moment: %s", ev.Type)
			}
		case <-timeout:
			return
		}
	}
}
