package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/test/support/agentproc"
	"github.com/vk-static/vk-static/test/support/cgrouptest"
	"github.com/vk-static/vk-static/test/support/podwait"
)

// startProcessAgent runs an agent with --provider process (and extraArgs). Container processes
// outlive their agent: when the test ends the agent is stopped and whatever still runs for its
// containers is killed, and the test fails (agentproc.StartInTest): a test removes its pods and
// waits for noContainerProcesses itself.
func startProcessAgent(t *testing.T, extraArgs ...string) *agent {
	t.Helper()
	return startAgent(t, processAgentOptions(t, agentOptions{}, extraArgs...))
}

// processAgentOptions are opts for an agent with --provider process (and extraArgs).
func processAgentOptions(t *testing.T, opts agentOptions, extraArgs ...string) agentOptions {
	t.Helper()
	// No pod network here: API pods share the host's, as on a node without CNI.
	args := []string{"--provider", "process", "--process-allow-host-network"}
	if os.Geteuid() == 0 && !slices.Contains(extraArgs, "--cgroup-root") {
		// Pods' cgroups under the test's own, removed when it ends, rather than at the
		// hierarchy's root where the kubelet's default puts them.
		args = append(args, "--cgroup-root", cgrouptest.Root(t))
	}
	opts.extraArgs = append(append(args, extraArgs...), opts.extraArgs...)
	return opts
}

// staticPod is a static pod manifest with one container, main, running argv.
func staticPod(name string, argv ...string) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": name}},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers:                    []corev1.Container{{Name: "main", Image: "busybox", Command: argv}},
		},
	}
}

// shell is argv running script with sh -c.
func shell(script string) []string { return []string{"sh", "-c", script} }

// writePod writes pod as the manifest <name>.json.
func (a *agent) writePod(pod *corev1.Pod) { a.t.Helper(); require.NoError(a.t, a.WritePod(pod)) }

func (a *agent) removePod(name string) { a.t.Helper(); require.NoError(a.t, a.RemovePod(name)) }

// waitMirror polls the mirror of static pod name until check passes (nil) and returns it.
func (a *agent) waitMirror(name string, timeout time.Duration, what string, check func(*corev1.Pod) error) *corev1.Pod {
	a.t.Helper()
	return podwait.Until(a.t, env.Admin, metav1.NamespaceDefault, a.MirrorName(name), timeout, what, check)
}

// podReady reports the pod's Ready condition.
func podReady(p *corev1.Pod) corev1.ConditionStatus {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status
		}
	}
	return ""
}

// workload is the process of the container instance cs names (its containerID), as the
// supervisor recorded it.
func (a *agent) workload(cs *corev1.ContainerStatus) agentproc.Workload {
	a.t.Helper()
	require.NotNil(a.t, cs)
	w, err := agentproc.ContainerWorkload(a.Dir, cs.ContainerID)
	require.NoError(a.t, err)
	require.NotZero(a.t, w.Pid, "no pid recorded for %s", cs.ContainerID)
	return w
}

// removePods removes the static pods' manifests and waits until their mirrors are gone and
// nothing runs for the agent's containers.
func (a *agent) removePods(names ...string) {
	a.t.Helper()
	for _, name := range names {
		a.removePod(name)
	}
	for _, name := range names {
		a.mirrorGone(name)
	}
	a.noContainerProcesses(10 * time.Second)
}

// noContainerProcesses waits until nothing runs for the agent's containers.
func (a *agent) noContainerProcesses(timeout time.Duration) {
	a.t.Helper()
	require.EventuallyWithT(a.t, func(c *assert.CollectT) {
		procs, err := agentproc.ContainerProcesses(a.Dir)
		require.NoError(c, err)
		assert.Empty(c, procs)
	}, timeout, 100*time.Millisecond, "no container processes left")
}

// podLogs is kubectl logs through the API server.
func podLogs(ctx context.Context, namespace, name string, opts *corev1.PodLogOptions) (string, error) {
	data, err := env.Admin.CoreV1().Pods(namespace).GetLogs(name, opts).DoRaw(ctx)
	if err != nil {
		return "", fmt.Errorf("%w: %s", err, data)
	}
	return string(data), nil
}

// eventsFor lists the events of pod namespace/name with reason.
func eventsFor(ctx context.Context, namespace, name, reason string) ([]corev1.Event, error) {
	list, err := env.Admin.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{
		FieldSelector: "involvedObject.name=" + name + ",reason=" + reason})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

// waitEvent waits for an event of pod namespace/name with reason whose message contains want.
func waitEvent(t *testing.T, namespace, name, reason, want string, timeout time.Duration) corev1.Event {
	t.Helper()
	var got corev1.Event
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		evs, err := eventsFor(context.Background(), namespace, name, reason)
		require.NoError(c, err)
		for _, e := range evs {
			if strings.Contains(e.Message, want) {
				got = e
				return
			}
		}
		var msgs []string
		for _, e := range evs {
			msgs = append(msgs, e.Message)
		}
		c.Errorf("no %s event with %q among %q", reason, want, msgs)
	}, timeout, 200*time.Millisecond, "%s event for %s/%s", reason, namespace, name)
	return got
}

// sharedDir is a fresh directory that container processes (the default user, nobody) can
// read — t.TempDir's parents are private to root — and that API pods see: not under /tmp.
func sharedDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp(agentproc.PodVisibleTempDirs, "vk-static-e2e-")
	require.NoError(t, err)
	require.NoError(t, os.Chmod(dir, 0o755))
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

func touch(t *testing.T, path string) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, nil, 0o644))
}

// logFiles lists the container log files of the agent's pods.
func (a *agent) logFiles() []string {
	m, _ := filepath.Glob(filepath.Join(a.Dir, "log", "pods", "*", "*", "*.log"))
	return m
}
