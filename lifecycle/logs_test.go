package lifecycle

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

// Containers log where the kubelet's do, which log shippers read:
// <PodLogsDir>/<namespace>_<name>_<uid>/<container>/<attempt>.log, linked from the containers
// directory beside it as <pod>_<namespace>_<container>-<id>.log while the instance exists. The
// link of a removed instance goes with it, and the pod's log directory with the pod.
func TestContainerLogLayout(t *testing.T) {
	h := newHarness(t)
	h.stop()
	podLogs := filepath.Join(t.TempDir(), "log", "pods")
	h.configure = func(c *Config) { c.PodLogsDir = podLogs }
	h.start()
	links := filepath.Join(filepath.Dir(podLogs), "containers")

	pod := testPod("lay", corev1.RestartPolicyAlways, ctr("app", "sleep", "1000"))
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	h.eventually(pod.UID, "running", func(s *corev1.PodStatus) bool { return mainState(s, 0).Running != nil })

	dir := filepath.Join(podLogs, "default_p-lay_lay")
	logPath := func(attempt string) string { return filepath.Join(dir, "app", attempt+".log") }
	assert.Equal(t, logPath("0"), h.rt.config("app").LogPath)
	link := func() string {
		id := h.rt.running("app")
		return filepath.Join(links, "p-lay_default_app-"+id+".log")
	}
	target, err := os.Readlink(link())
	require.NoError(t, err, "the link to the running instance's log")
	assert.Equal(t, logPath("0"), target)

	// Two restarts: the first instance is removed (the kubelet keeps one dead one), its link too.
	first := h.rt.running("app")
	h.rt.exit(first, 1) // restarted at once, as the kubelet's first restart
	h.eventually(pod.UID, "restarted", func(s *corev1.PodStatus) bool {
		return s.ContainerStatuses[0].RestartCount == 1 && mainState(s, 0).Running != nil
	})
	h.rt.exit(h.rt.running("app"), 1)
	h.eventually(pod.UID, "backing off", func(s *corev1.PodStatus) bool { return mainState(s, 0).Waiting != nil })
	h.step(10 * time.Second)
	h.eventually(pod.UID, "restarted again", func(s *corev1.PodStatus) bool {
		return s.ContainerStatuses[0].RestartCount == 2 && mainState(s, 0).Running != nil
	})
	assert.NoFileExists(t, filepath.Join(links, "p-lay_default_app-"+first+".log"), "the removed instance's link")
	target, err = os.Readlink(link())
	require.NoError(t, err)
	assert.Equal(t, logPath("2"), target)

	h.deleteUntilStopped(pod)
	require.Eventually(t, func() bool { return !h.known(pod) }, 10*time.Second, 5*time.Millisecond, "forgotten")
	assert.NoDirExists(t, dir, "the pod's log directory goes with it")
	entries, err := os.ReadDir(links)
	require.NoError(t, err)
	assert.Empty(t, entries, "no link is left")
}
