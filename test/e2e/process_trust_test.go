package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/test/support/podwait"
)

// Trust follows the source: a static pod that names no user — the shape of every manifest
// dropped into /etc/kubernetes/manifests — runs as root and writes the root-owned host directory
// its hostPath names, with none of --process-allow-root and --process-allowed-host-paths given;
// the same pod through the API server is refused that hostPath, and without it runs as the
// default user (nobody).
func TestProcessStaticPodsTrusted(t *testing.T) {
	t.Parallel()
	a := startProcessAgent(t)
	dir := sharedDir(t) // root's, 0755: only root may write it
	spec := func() corev1.PodSpec {
		return corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers: []corev1.Container{{Name: "main", Image: "busybox",
				Command:      shell(`id -u > ` + dir + `/written-by && exec sleep 1000`),
				VolumeMounts: []corev1.VolumeMount{{Name: "host", MountPath: dir}},
			}},
			Volumes: []corev1.Volume{{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: dir}}}},
		}
	}

	static := staticPod("writer")
	static.Spec = spec()
	a.writePod(static)
	a.waitMirror("writer", 30*time.Second, "Running", podwait.MainRunning)
	var fi os.FileInfo
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		data, err := os.ReadFile(filepath.Join(dir, "written-by"))
		require.NoError(c, err)
		assert.Equal(c, "0\n", string(data), "the static pod's user")
		fi, err = os.Stat(filepath.Join(dir, "written-by"))
		require.NoError(c, err)
	}, 10*time.Second, 100*time.Millisecond, "the static pod writes the root-owned directory")
	assert.Equal(t, uint32(0), fi.Sys().(*syscall.Stat_t).Uid, "the file's owner")

	ctx := context.Background()
	ns := env.Namespace(t)
	pods := env.Admin.CoreV1().Pods(ns)
	api := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "writer"}, Spec: spec()}
	api.Spec.NodeName = a.Node
	_, err := pods.Create(ctx, api, metav1.CreateOptions{})
	require.NoError(t, err)
	e := waitEvent(t, ns, "writer", "FailedMount", "--process-allowed-host-paths", 30*time.Second)
	assert.Contains(t, e.Message, "an API pod's hostPath volumes are not allowed on this node")
	p, err := pods.Get(ctx, "writer", metav1.GetOptions{})
	require.NoError(t, err)
	cs := podwait.MainStatus(p)
	assert.True(t, cs == nil || (cs.State.Running == nil && cs.ContainerID == ""), "the API pod's container was started: %s", podwait.Describe(cs))

	whoami := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "whoami"}, Spec: corev1.PodSpec{
		NodeName: a.Node, TerminationGracePeriodSeconds: ptr.To[int64](1), AutomountServiceAccountToken: ptr.To(false),
		Containers: []corev1.Container{{Name: "main", Image: "busybox", Command: shell(`id -u; exec sleep 1000`)}},
	}}
	_, err = pods.Create(ctx, whoami, metav1.CreateOptions{})
	require.NoError(t, err)
	podwait.Until(t, env.Admin, ns, "whoami", 30*time.Second, "Running", podwait.MainRunning)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		logs, err := podLogs(ctx, ns, "whoami", &corev1.PodLogOptions{Container: "main"})
		require.NoError(c, err)
		assert.Equal(c, "65534", strings.TrimSpace(logs), "the API pod's user: the default")
	}, 10*time.Second, 100*time.Millisecond, "the API pod logs its uid")

	a.removePod("writer")
	for _, name := range []string{"writer", "whoami"} {
		require.NoError(t, pods.Delete(ctx, name, metav1.DeleteOptions{}), name)
	}
	a.mirrorGone("writer")
	for _, name := range []string{"writer", "whoami"} {
		podwait.Gone(t, env.Admin, ns, name, 30*time.Second)
	}
	a.noContainerProcesses(10 * time.Second)
}
