package e2ecri

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	internalapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	criclient "k8s.io/cri-client/pkg"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/test/support/agentproc"
	"github.com/vk-static/vk-static/test/support/podwait"
	"github.com/vk-static/vk-static/test/support/testcontainerd"
)

// agent is one vk-static process with --provider cri on the package's containerd.
type agent struct {
	*agentproc.Agent
	t *testing.T
}

// startAgent runs the agent on the package's containerd for a node named after the test and
// waits until it is ready. When the test ends the agent is stopped (agentproc.StartInTest), and
// then the containerd must hold nothing: whatever is left is an error, and is removed so that
// the next test starts clean.
func startAgent(t *testing.T, extraArgs ...string) *agent {
	t.Helper()
	return startAgentOn(t, cd, extraArgs...)
}

// startAgentOn is startAgent on containerd c.
func startAgentOn(t *testing.T, c *testcontainerd.Containerd, extraArgs ...string) *agent {
	t.Helper()
	t.Cleanup(func() { requireNothingLeft(t, c, 0) }) // registered first: runs after the agent's stop
	p := agentproc.StartInTest(t, agentproc.Config{
		Binary: agentBinary,
		Dir:    t.TempDir(),
		Node:   agentproc.NodeName(t),
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
	return &agent{Agent: p, t: t}
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
func (a *agent) writePod(pod *corev1.Pod) { a.t.Helper(); require.NoError(a.t, a.WritePod(pod)) }

// removePods removes the static pods' manifests and waits until their mirrors are gone.
func (a *agent) removePods(names ...string) {
	a.t.Helper()
	for _, n := range names {
		require.NoError(a.t, a.RemovePod(n))
	}
	for _, n := range names {
		podwait.Gone(a.t, env.Admin, metav1.NamespaceDefault, a.MirrorName(n), 60*time.Second)
	}
}

// waitMirror polls static pod name's mirror until check passes and returns it.
func (a *agent) waitMirror(name string, timeout time.Duration, what string, check func(*corev1.Pod) error) *corev1.Pod {
	a.t.Helper()
	return podwait.Until(a.t, env.Admin, metav1.NamespaceDefault, a.MirrorName(name), timeout, what, check)
}

// podFailed is a podwait.Until check: phase Failed.
func podFailed(p *corev1.Pod) error {
	if p.Status.Phase != corev1.PodFailed {
		return fmt.Errorf("phase %q: %s", p.Status.Phase, p.Status.Message)
	}
	return nil
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

// watchPods is watchFromNow for the pods of namespace whose field (metadata.name, spec.nodeName)
// is value: seen gets each pod the watch reports, with the event's type.
func watchPods(t *testing.T, namespace, field, value string, seen func(watch.EventType, *corev1.Pod)) (stop func()) {
	t.Helper()
	return watchFromNow(t, func(ctx context.Context) (watch.Interface, error) {
		return env.Admin.CoreV1().Pods(namespace).Watch(ctx, metav1.ListOptions{
			FieldSelector: fields.OneTermEqualSelector(field, value).String()})
	}, func(ev watch.Event) {
		if p, ok := ev.Object.(*corev1.Pod); ok {
			seen(ev.Type, p)
		}
	})
}
