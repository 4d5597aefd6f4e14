package e2e

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/test/support/podwait"
)

// A volume over the agent's own directories: the test agents' --root-dir is under /tmp, and a
// pod mounts an emptyDir at /tmp, which hides --root-dir in the container's mount namespace. The
// supervisor still binds its socket, records the start and the end and writes the log (it
// reaches its directories through descriptors opened before the mounts): the pod runs, its logs
// and exec work, and a command that cannot start is shown as StartError with its reason rather
// than left ContainerCreating.
func TestProcessVolumeHidesRootDir(t *testing.T) {
	t.Parallel()
	a := startProcessAgent(t)
	require.True(t, strings.HasPrefix(a.Dir, "/tmp/"), "the test needs --root-dir under /tmp: %s", a.Dir)
	overTmp := func(name string, argv ...string) *corev1.Pod {
		p := staticPod(name, argv...)
		p.Spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
		p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "scratch", MountPath: "/tmp"}}
		return p
	}
	a.writePod(overTmp("over-tmp", shell(`echo "entries in /tmp: $(ls -A /tmp | wc -l)"; echo hi > /tmp/mine; exec sleep 1000`)...))
	a.writePod(overTmp("over-tmp-missing", "vk-static-e2e-no-such-command"))

	mirror := a.waitMirror("over-tmp", 30*time.Second, "Running", podwait.MainRunning)
	ctx := context.Background()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		logs, err := podLogs(ctx, mirror.Namespace, mirror.Name, &corev1.PodLogOptions{Container: "main"})
		require.NoError(c, err)
		assert.Equal(c, "entries in /tmp: 0", strings.TrimSpace(logs), "the container sees its emptyDir at /tmp")
	}, 10*time.Second, 100*time.Millisecond, "the container's log")
	k := newKubectl(t)
	r := k.run(t, "", "exec", "-n", mirror.Namespace, mirror.Name, "-c", "main", "--", "cat", "/tmp/mine")
	require.Zero(t, r.code, "%s", r)
	assert.Equal(t, "hi\n", r.stdout, "exec runs in the container's mounts")

	a.waitMirror("over-tmp-missing", 30*time.Second, "StartError naming the command", func(p *corev1.Pod) error {
		cs := podwait.MainStatus(p)
		if cs == nil {
			return errors.New("no status")
		}
		for _, term := range []*corev1.ContainerStateTerminated{cs.State.Terminated, cs.LastTerminationState.Terminated} {
			if term != nil && term.Reason == "StartError" && strings.Contains(term.Message, `"vk-static-e2e-no-such-command"`) {
				return nil
			}
		}
		return fmt.Errorf("main %s", podwait.Describe(cs))
	})

	// The end is recorded too: a container stopped by the pod's removal is gone from the node.
	a.removePods("over-tmp", "over-tmp-missing")
}
