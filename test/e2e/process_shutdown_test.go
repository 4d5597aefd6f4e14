package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/test/support/fakelogind"
	"github.com/vk-static/vk-static/test/support/podwait"
)

// TestProcessGracefulNodeShutdown: the built agent with shutdownGracePeriod 8s and
// shutdownGracePeriodCriticalPods 4s takes logind's delay lock on the system bus (a fake logind
// on a private dbus-daemon); at PrepareForShutdown(true) the Node turns Ready=False, "node is
// shutting down", the API pod is stopped first — its preStop hook runs — then the static pod,
// both left Failed with the kubelet's reason, message and DisruptionTarget condition in the
// API server, and the lock is released.
func TestProcessGracefulNodeShutdown(t *testing.T) {
	// Not parallel: the agent finds the bus in its environment, which t.Setenv sets for the
	// whole test binary.
	l := fakelogind.Start(t, time.Minute)
	t.Setenv("DBUS_SYSTEM_BUS_ADDRESS", l.Address())
	dir := sharedDir(t)
	require.NoError(t, os.Chmod(dir, 0o777)) // the API pod writes there as nobody
	config := filepath.Join(t.TempDir(), "kubelet.yaml")
	require.NoError(t, os.WriteFile(config, []byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"+
		"shutdownGracePeriod: 8s\nshutdownGracePeriodCriticalPods: 4s\n"), 0o600))
	a := startProcessAgent(t, "--config", config, "--process-allowed-host-paths", dir)

	spec := func(file string) corev1.PodSpec {
		return corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](30),
			AutomountServiceAccountToken:  ptr.To(false),
			Containers: []corev1.Container{{Name: "main", Image: "busybox", Command: shell("exec sleep 1000"),
				VolumeMounts: []corev1.VolumeMount{{Name: "out", MountPath: dir}},
				Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{
					Command: shell("date +%s%N > " + filepath.Join(dir, file))}}},
			}},
			Volumes: []corev1.Volume{{Name: "out", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: dir}}}},
		}
	}
	static := staticPod("node-agent")
	static.Spec = spec("static")
	a.writePod(static)
	ctx := context.Background()
	ns := env.Namespace(t)
	web := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: spec("web")}
	web.Spec.NodeName = a.Node
	_, err := env.Admin.CoreV1().Pods(ns).Create(ctx, web, metav1.CreateOptions{})
	require.NoError(t, err)
	podwait.Until(t, env.Admin, ns, "web", 60*time.Second, "Running", podwait.MainRunning)
	a.waitMirror("node-agent", 60*time.Second, "Running", podwait.MainRunning)
	require.Eventually(t, l.Held, 30*time.Second, 20*time.Millisecond, "the agent takes logind's delay lock")
	require.NotEmpty(t, l.Calls())
	assert.Equal(t, fakelogind.Inhibit{What: "shutdown", Who: "vk-static", Why: "vk-static stops the node's pods gracefully", Mode: "delay"}, l.Calls()[0])

	require.NoError(t, l.PrepareForShutdown(true))
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		n, err := env.Admin.CoreV1().Nodes().Get(ctx, a.Node, metav1.GetOptions{})
		require.NoError(c, err)
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady {
				assert.Equal(c, corev1.ConditionFalse, cond.Status)
				assert.Equal(c, "KubeletNotReady", cond.Reason)
				assert.Equal(c, "node is shutting down", cond.Message)
				return
			}
		}
		c.Errorf("no Ready condition")
	}, 30*time.Second, 100*time.Millisecond, "the Node says it shuts down")
	terminated := func(p *corev1.Pod) error {
		if p.Status.Phase != corev1.PodFailed || p.Status.Reason != "Terminated" ||
			p.Status.Message != "Pod was terminated in response to imminent node shutdown." {
			return fmt.Errorf("phase %s reason %q message %q", p.Status.Phase, p.Status.Reason, p.Status.Message)
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue && c.Reason == "TerminationByKubelet" &&
				c.Message == "Pod was terminated in response to imminent node shutdown." {
				return nil
			}
		}
		return fmt.Errorf("no DisruptionTarget condition: %v", p.Status.Conditions)
	}
	podwait.Until(t, env.Admin, ns, "web", 30*time.Second, "Terminated for the node's shutdown", terminated)
	a.waitMirror("node-agent", 30*time.Second, "Terminated for the node's shutdown", terminated)
	require.Eventually(t, func() bool { return !l.Held() }, 30*time.Second, 20*time.Millisecond, "the lock is released once the pods have stopped")

	stamp := func(name string) int64 {
		data, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err, "%s's preStop hook ran", name)
		n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
		require.NoError(t, err)
		return n
	}
	assert.Less(t, stamp("web"), stamp("static"), "the API pod is stopped before the static pod, a critical one")
}
