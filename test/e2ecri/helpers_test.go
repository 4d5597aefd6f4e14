package e2ecri

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	internalapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	criclient "k8s.io/cri-client/pkg"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/test/support/agentproc"
	"github.com/vk-static/vk-static/test/support/testcontainerd"
)

// agent is one vk-static process with --provider cri on the package's containerd.
type agent struct {
	*agentproc.Agent
	t *testing.T
}

// startAgent runs the agent on the package's containerd for a node named after the test and
// waits until it is ready. When the test ends the agent is stopped (its log printed if the
// test failed), and then the containerd must hold nothing: whatever is left is an error, and
// is removed so that the next test starts clean.
func startAgent(t *testing.T, extraArgs ...string) *agent {
	t.Helper()
	return startAgentOn(t, cd, extraArgs...)
}

// startAgentOn is startAgent on containerd c.
func startAgentOn(t *testing.T, c *testcontainerd.Containerd, extraArgs ...string) *agent {
	t.Helper()
	t.Cleanup(func() { requireNothingLeft(t, c, 0) }) // registered first: runs after the agent's stop
	p, err := agentproc.Start(agentproc.Config{
		Binary: agentBinary,
		Dir:    t.TempDir(),
		Node:   nodeName(t),
		Env:    env,
		Args: append([]string{
			"--provider", "cri",
			"--container-runtime-endpoint", c.Endpoint(),
			"--file-check-frequency", "1h", // changes must be seen through fsnotify
			"--node-status-update-frequency", "2s",
			"--kube-api-qps", "-1",
			"-v", "2",
		}, extraArgs...),
	})
	require.NoError(t, err)
	a := &agent{Agent: p, t: t}
	t.Cleanup(func() {
		if err := a.Stop(20 * time.Second); err != nil {
			t.Error(err)
		}
		if t.Failed() {
			if data, err := os.ReadFile(a.LogPath); err == nil {
				t.Logf("agent log (%s):\n%s", a.Node, lastLines(string(data), 60))
			}
		}
	})
	a.waitReady()
	return a
}

func (a *agent) waitReady() {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(a.t, a.WaitReady(ctx))
}

var nodeSeq atomic.Int32

// nodeName is a node name from the test's name, unique in the run (mirrors and Nodes outlive
// an agent).
func nodeName(t *testing.T) string {
	var b strings.Builder
	for _, r := range strings.ToLower(t.Name()) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	s := strings.Trim(b.String(), "-")
	return strings.Trim(s[:min(len(s), 40)], "-") + "-" + strconv.Itoa(int(nodeSeq.Add(1)))
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// imagePod is a host-network pod of one container, main, running the workload image in mode
// args ("sleep", "log --every 100ms", ...).
func imagePod(name, image string, args ...string) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			HostNetwork:                   true,
			TerminationGracePeriodSeconds: ptr.To[int64](2),
			Containers:                    []corev1.Container{{Name: "main", Image: image, Args: args}},
		},
	}
}

// writePod writes pod as the static pod manifest <name>.json.
func (a *agent) writePod(pod *corev1.Pod) {
	a.t.Helper()
	data, err := json.Marshal(pod)
	require.NoError(a.t, err)
	require.NoError(a.t, a.WriteManifest(pod.Name+".json", data))
}

// removePods removes the static pods' manifests and waits until their mirrors are gone.
func (a *agent) removePods(names ...string) {
	a.t.Helper()
	for _, n := range names {
		require.NoError(a.t, a.RemoveManifest(n+".json"))
	}
	for _, n := range names {
		podGone(a.t, metav1.NamespaceDefault, a.mirror(n), 60*time.Second)
	}
}

func (a *agent) mirror(name string) string { return name + "-" + a.Node }

// waitMirror polls static pod name's mirror until check passes and returns it.
func (a *agent) waitMirror(name string, timeout time.Duration, what string, check func(*corev1.Pod) error) *corev1.Pod {
	a.t.Helper()
	return waitPod(a.t, metav1.NamespaceDefault, a.mirror(name), timeout, what, check)
}

func waitPod(t *testing.T, namespace, name string, timeout time.Duration, what string, check func(*corev1.Pod) error) *corev1.Pod {
	t.Helper()
	var got *corev1.Pod
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		p, err := env.Admin.CoreV1().Pods(namespace).Get(context.Background(), name, metav1.GetOptions{})
		require.NoError(c, err)
		if err := check(p); err != nil {
			c.Errorf("%v", err)
			return
		}
		got = p
	}, timeout, 100*time.Millisecond, "%s/%s: %s", namespace, name, what)
	return got
}

func podGone(t *testing.T, namespace, name string, timeout time.Duration) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		_, err := env.Admin.CoreV1().Pods(namespace).Get(context.Background(), name, metav1.GetOptions{})
		assert.True(c, apierrors.IsNotFound(err), "still there (%v)", err)
	}, timeout, 100*time.Millisecond, "%s/%s gone", namespace, name)
}

// mainStatus is container main's status, nil when the pod reports none.
func mainStatus(p *corev1.Pod) *corev1.ContainerStatus {
	for i := range p.Status.ContainerStatuses {
		if p.Status.ContainerStatuses[i].Name == "main" {
			return &p.Status.ContainerStatuses[i]
		}
	}
	return nil
}

// mainRunning is a waitPod check: phase Running, main running.
func mainRunning(p *corev1.Pod) error {
	cs := mainStatus(p)
	if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning || cs == nil || cs.State.Running == nil {
		return fmt.Errorf("phase %q, main %s", p.Status.Phase, describe(cs))
	}
	return nil
}

// podFailed is a waitPod check: phase Failed.
func podFailed(p *corev1.Pod) error {
	if p.Status.Phase != corev1.PodFailed {
		return fmt.Errorf("phase %q: %s", p.Status.Phase, p.Status.Message)
	}
	return nil
}

func describe(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}

// runtimeService is a CRI client of the package's containerd, closed when the test ends.
func runtimeService(t *testing.T) internalapi.RuntimeService {
	t.Helper()
	ctx := context.Background()
	rs, err := criclient.NewRemoteRuntimeService(ctx, cd.Endpoint(), 10*time.Second, nil, false)
	require.NoError(t, err)
	t.Cleanup(func() { _ = rs.Close(ctx) })
	return rs
}

// runtimeContainers lists every container in the containerd, in any state, by ID.
func runtimeContainers(t require.TestingT, rs internalapi.RuntimeService) map[string]*runtimeapi.Container {
	list, err := rs.ListContainers(context.Background(), nil)
	require.NoError(t, err)
	out := make(map[string]*runtimeapi.Container, len(list))
	for _, c := range list {
		out[c.Id] = c
	}
	return out
}

// leftovers describes what containerd c still holds: sandboxes, containers, shims, mounts
// of containers and sandboxes (their network namespaces included), pod addresses its bridge
// network has not released; "" when nothing.
func leftovers(ctx context.Context, c *testcontainerd.Containerd) (string, error) {
	rs, err := criclient.NewRemoteRuntimeService(ctx, c.Endpoint(), 10*time.Second, nil, false)
	if err != nil {
		return "", err
	}
	defer rs.Close(ctx)
	var left []string
	sandboxes, err := rs.ListPodSandbox(ctx, nil)
	if err != nil {
		return "", err
	}
	for _, s := range sandboxes {
		left = append(left, "sandbox "+s.Metadata.Namespace+"/"+s.Metadata.Name+" "+s.State.String())
	}
	containers, err := rs.ListContainers(ctx, nil)
	if err != nil {
		return "", err
	}
	for _, c := range containers {
		left = append(left, "container "+c.Metadata.Name+" "+c.State.String())
	}
	shims, err := c.Shims()
	if err != nil {
		return "", err
	}
	for _, pid := range shims {
		left = append(left, "shim pid "+strconv.Itoa(pid))
	}
	mounts, err := mountsUnder(c.Dir())
	if err != nil {
		return "", err
	}
	for _, m := range mounts {
		left = append(left, "mount "+m)
	}
	ips, err := c.PodIPsInUse()
	if err != nil {
		return "", err
	}
	for _, ip := range ips {
		left = append(left, "pod address "+ip.String())
	}
	return strings.Join(left, "; "), nil
}

// requireNothingLeft fails the test when containerd c still holds anything after wait (0:
// look once), and then removes it all so that the next test starts clean.
func requireNothingLeft(t *testing.T, c *testcontainerd.Containerd, wait time.Duration) {
	t.Helper()
	ctx := context.Background()
	var left string
	deadline := time.Now().Add(wait)
	for {
		var err error
		left, err = leftovers(ctx, c)
		require.NoError(t, err)
		if left == "" || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond) // polling with a deadline
	}
	if left == "" {
		return
	}
	t.Errorf("left in containerd: %s", left)
	rs, err := criclient.NewRemoteRuntimeService(ctx, c.Endpoint(), 10*time.Second, nil, false)
	require.NoError(t, err)
	defer rs.Close(ctx)
	sandboxes, _ := rs.ListPodSandbox(ctx, nil)
	for _, s := range sandboxes {
		_ = rs.StopPodSandbox(ctx, s.Id)
		_ = rs.RemovePodSandbox(ctx, s.Id)
	}
}

// nothingLeft waits until the containerd holds nothing of the test's pods.
func nothingLeft(t *testing.T) { t.Helper(); requireNothingLeft(t, cd, 30*time.Second) }

// mountsUnder lists the mount points below dir.
func mountsUnder(dir string) ([]string, error) {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	var out []string
	for line := range strings.Lines(string(data)) {
		if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], dir+"/") {
			out = append(out, f[4])
		}
	}
	return out, nil
}

// watchFromNow opens a watch and hands every event to seen, one at a time, until the test ends
// or stop is called (stop returns after the last call of seen).
func watchFromNow(t *testing.T, open func(context.Context) (watch.Interface, error), seen func(watch.Event)) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w, err := open(ctx)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			seen(ev)
		}
	}()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); w.Stop(); <-done }) }
	t.Cleanup(stop)
	return stop
}
