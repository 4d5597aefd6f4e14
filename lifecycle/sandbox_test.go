package lifecycle

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// fakeRuntimeClasses is a RuntimeClass getter over a map, as the API server answers: a missing
// RuntimeClass is its NotFound; fail, when set, is the answer to every read.
type fakeRuntimeClasses struct {
	mu       sync.Mutex
	handlers map[string]string
	fail     error
}

func (f *fakeRuntimeClasses) set(name, handler string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.handlers[name] = handler
}

func (f *fakeRuntimeClasses) GetRuntimeClass(_ context.Context, name string) (*nodev1.RuntimeClass, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return nil, f.fail
	}
	h, ok := f.handlers[name]
	if !ok {
		return nil, apierrors.NewNotFound(nodev1.Resource("runtimeclasses"), name)
	}
	return &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Handler: h}, nil
}

// handlersOf are the runtime handlers of the sandboxes the pod named name was run with.
func (h *harness) handlersOf(name string) []string {
	h.rt.mu.Lock()
	defer h.rt.mu.Unlock()
	return slices.Clone(h.rt.sandboxHandlers[name])
}

// waitSandboxEvent waits for a Warning FailedCreatePodSandBox event with message.
func (h *harness) waitSandboxEvent(message string) {
	h.t.Helper()
	var seen []string
	if !assert.Eventually(h.t, func() bool {
		seen = append(seen, h.drainEvents()...)
		return slices.Contains(seen, "Warning FailedCreatePodSandBox "+message)
	}, 10*time.Second, 5*time.Millisecond) {
		h.t.Fatalf("no FailedCreatePodSandBox event %q; events:\n%s", message, strings.Join(seen, "\n"))
	}
}

// A pod's sandbox runs with its RuntimeClass's handler, as the kubelet's: a RuntimeClass that
// does not exist fails the sandbox with the kubelet's event, the pod staying Pending, and it is
// tried again until the RuntimeClass exists.
func TestSandboxRuntimeHandlerFromTheRuntimeClass(t *testing.T) {
	classes := &fakeRuntimeClasses{handlers: map[string]string{"kata-rc": "kata"}}
	h := newHarness(t)
	h.stop()
	h.configure = func(c *Config) { c.RuntimeClasses = classes }
	h.start()
	ctx := context.Background()

	plain := testPod("plain", corev1.RestartPolicyAlways, ctr("app", "sleep", "1000"))
	kata := testPod("kata", corev1.RestartPolicyAlways, ctr("app", "sleep", "1000"))
	kata.Spec.RuntimeClassName = ptr.To("kata-rc")
	for _, pod := range []*corev1.Pod{plain, kata} {
		require.NoError(t, h.p.CreatePod(ctx, pod))
		h.eventually(pod.UID, "Running", func(s *corev1.PodStatus) bool { return s.Phase == corev1.PodRunning })
	}
	assert.Equal(t, []string{""}, h.handlersOf(plain.Name), "no RuntimeClass: the runtime's default")
	assert.Equal(t, []string{"kata"}, h.handlersOf(kata.Name))

	missing := testPod("missing", corev1.RestartPolicyAlways, ctr("app", "sleep", "1000"))
	missing.Spec.RuntimeClassName = ptr.To("foo")
	require.NoError(t, h.p.CreatePod(ctx, missing))
	h.waitSandboxEvent(`Failed to create pod sandbox: runtimeclass.node.k8s.io "foo" not found`)
	h.eventually(missing.UID, "Pending", func(s *corev1.PodStatus) bool { return s.Phase == corev1.PodPending })
	assert.Empty(t, h.handlersOf(missing.Name), "no sandbox is run without its RuntimeClass")

	classes.set("foo", "gvisor")
	h.step(retryAfter)
	h.eventually(missing.UID, "Running once its RuntimeClass exists", func(s *corev1.PodStatus) bool { return s.Phase == corev1.PodRunning })
	assert.Equal(t, []string{"gvisor"}, h.handlersOf(missing.Name))

	classes.mu.Lock()
	classes.fail = errors.New("connection refused")
	classes.mu.Unlock()
	down := testPod("down", corev1.RestartPolicyAlways, ctr("app", "sleep", "1000"))
	down.Spec.RuntimeClassName = ptr.To("kata-rc")
	require.NoError(t, h.p.CreatePod(ctx, down))
	h.waitSandboxEvent("Failed to create pod sandbox: failed to lookup RuntimeClass kata-rc: connection refused")
	assert.Empty(t, h.handlersOf(down.Name), "never the default handler in place of one it cannot read")
}

// Without an API server (no RuntimeClass getter) every sandbox has the default handler, as a
// standalone kubelet's, whatever RuntimeClass the pod names.
func TestSandboxRuntimeHandlerStandalone(t *testing.T) {
	h := newHarness(t)
	pod := testPod("standalone", corev1.RestartPolicyAlways, ctr("app", "sleep", "1000"))
	pod.Spec.RuntimeClassName = ptr.To("kata-rc")
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	h.eventually(pod.UID, "Running", func(s *corev1.PodStatus) bool { return s.Phase == corev1.PodRunning })
	assert.Equal(t, []string{""}, h.handlersOf(pod.Name))
}
