package lifecycle

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/vk-static/vk-static/podstatus"
)

// resizingRuntime is a fakeRuntime that resizes containers in place (ResourceUpdater): it
// records each update, and fails them while fail is set.
type resizingRuntime struct {
	*fakeRuntime
	mu      sync.Mutex
	updates []string
	fail    error
}

func (r *resizingRuntime) UpdateContainerResources(_ context.Context, id string, pod *corev1.Pod, c *corev1.Container) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail != nil {
		return r.fail
	}
	r.updates = append(r.updates, fmt.Sprintf("%s %s cpu=%s memory=%s pod-cpu=%s", id, c.Name,
		c.Resources.Limits.Cpu(), c.Resources.Limits.Memory(), pod.Spec.Containers[0].Resources.Limits.Cpu()))
	return nil
}

// configOf is the config container id was created with.
func (f *fakeRuntime) configOf(id string) *ContainerConfig {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.containers[id].cfg
}

func (r *resizingRuntime) updated() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.updates...)
}

// resizeHarness runs the provider on a resizingRuntime, admitting on node (nil: no Node).
func resizeHarness(t *testing.T, node *corev1.Node) (*harness, *resizingRuntime) {
	h := newHarness(t)
	h.stop()
	rr := &resizingRuntime{fakeRuntime: h.rt}
	h.runtime = rr
	if node != nil {
		h.configure = func(c *Config) { c.Node = func() *corev1.Node { return node } }
	}
	h.start()
	return h, rr
}

// guaranteed sets the pod's first container's requests and limits to cpu and memory.
func guaranteed(pod *corev1.Pod, cpu, memory string) *corev1.Pod {
	l := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
	pod.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: l.DeepCopy(), Limits: l.DeepCopy()}
	return pod
}

// resized is pod's next generation with its first container's resources changed.
func resized(pod *corev1.Pod, cpu, memory string) *corev1.Pod {
	out := guaranteed(pod.DeepCopy(), cpu, memory)
	out.Generation++
	return out
}

func findCondition(s *corev1.PodStatus, t corev1.PodConditionType) (corev1.PodCondition, bool) {
	return podstatus.Find(s.Conditions, t)
}

func noResizeConditions(s *corev1.PodStatus) bool {
	_, pending := findCondition(s, corev1.PodResizePending)
	_, inProgress := findCondition(s, corev1.PodResizeInProgress)
	return !pending && !inProgress
}

// statusResourcesAre: the container runs with cpu and memory (status resources) and is
// allocated them, the resize of generation gen seen through.
func statusResourcesAre(gen int64, cpu, memory string) func(*corev1.PodStatus) bool {
	return func(s *corev1.PodStatus) bool {
		cs := s.ContainerStatuses[0]
		return s.ObservedGeneration == gen && cs.Resources != nil && noResizeConditions(s) &&
			cs.Resources.Limits.Cpu().Cmp(resource.MustParse(cpu)) == 0 &&
			cs.Resources.Limits.Memory().Cmp(resource.MustParse(memory)) == 0 &&
			cs.AllocatedResources.Cpu().Cmp(resource.MustParse(cpu)) == 0 &&
			cs.AllocatedResources.Memory().Cmp(resource.MustParse(memory)) == 0
	}
}

// A resize whose resizePolicy is NotRequired (the default) is applied to the running container
// in place, without a restart: the runtime is given the container's new resources and the pod's,
// and the status then shows them (resources, allocatedResources), the generation seen (by the
// status and each of its conditions) and no resize condition left, with the kubelet's events.
func TestResizeAppliedInPlace(t *testing.T) {
	h, rr := resizeHarness(t, admissionNode(10))
	ctx := context.Background()
	pod := guaranteed(testPod("inplace", corev1.RestartPolicyAlways, ctr("app", "sleep", "1000")), "200m", "100Mi")
	pod.Generation = 1
	require.NoError(t, h.p.CreatePod(ctx, pod))
	h.eventually(pod.UID, "Running with its resources", statusResourcesAre(1, "200m", "100Mi"))
	id := h.rt.running("app")

	require.NoError(t, h.p.UpdatePod(ctx, resized(pod, "300m", "200Mi")))
	h.eventually(pod.UID, "resized", statusResourcesAre(2, "300m", "200Mi"))
	assert.Equal(t, []string{id + " app cpu=300m memory=200Mi pod-cpu=300m"}, rr.updated())
	assert.Equal(t, int32(0), h.status(pod.UID).ContainerStatuses[0].RestartCount)
	assert.Equal(t, id, h.rt.running("app"), "the same instance runs on")
	for _, c := range h.status(pod.UID).Conditions {
		assert.Equal(t, int64(2), c.ObservedGeneration, "condition %s is of the resized spec", c.Type)
	}
	events := strings.Join(h.drainEvents(), "\n")
	assert.Contains(t, events, `Normal ResizeStarted Pod resize started: {"containers":[{"name":"app","resources":{"limits":{"cpu":"300m","memory":"200Mi"},"requests":{"cpu":"300m","memory":"200Mi"}}}],"generation":2}`)
	assert.Contains(t, events, "Normal ResizeCompleted Pod resize completed:")
}

// A resource whose resizePolicy is RestartContainer restarts the container with its new
// resources, whatever the pod's restart policy, and nothing is applied in place.
func TestResizeRestartContainerPolicy(t *testing.T) {
	h, rr := resizeHarness(t, nil)
	ctx := context.Background()
	pod := guaranteed(testPod("restart", corev1.RestartPolicyNever, ctr("app", "sleep", "1000")), "200m", "100Mi")
	pod.Spec.Containers[0].ResizePolicy = []corev1.ContainerResizePolicy{{ResourceName: corev1.ResourceMemory, RestartPolicy: corev1.RestartContainer}}
	require.NoError(t, h.p.CreatePod(ctx, pod))
	h.eventually(pod.UID, "Running", running)

	require.NoError(t, h.p.UpdatePod(ctx, resized(pod, "200m", "300Mi")))
	h.eventually(pod.UID, "restarted with its new memory", func(s *corev1.PodStatus) bool {
		return statusResourcesAre(1, "200m", "300Mi")(s) && s.ContainerStatuses[0].RestartCount == 1 && s.ContainerStatuses[0].State.Running != nil
	})
	assert.Empty(t, rr.updated(), "nothing applied in place")
	cfg := h.rt.configOf(h.rt.running("app"))
	assert.Equal(t, "300Mi", cfg.Container.Resources.Limits.Memory().String(), "the new instance is created with the allocation")
	assert.Contains(t, strings.Join(h.drainEvents(), "\n"), "Normal Killing Container app resize requires restart")
}

// A resize that does not fit beside the other admitted pods is Deferred, with the admission's
// message, as the kubelet v1.36 defers it: the container keeps its allocation. Once a pod
// leaves, it is allocated and applied. A restarted agent keeps the allocation it had: the
// deferred resize is not taken for allocated, and a new instance of the container starts with
// the old resources.
func TestResizeDeferredUntilItFitsAndKeptAcrossRestarts(t *testing.T) {
	h, rr := resizeHarness(t, admissionNode(10))
	ctx := context.Background()
	big := cpuPod("big", "600m")
	require.NoError(t, h.p.CreatePod(ctx, big))
	h.eventually(big.UID, "Running", running)
	pod := guaranteed(testPod("deferred", corev1.RestartPolicyAlways, ctr("web", "sleep", "1000")), "300m", "100Mi")
	pod.Generation = 1
	require.NoError(t, h.p.CreatePod(ctx, pod))
	h.eventually(pod.UID, "Running", running)

	require.NoError(t, h.p.UpdatePod(ctx, resized(pod, "500m", "100Mi")))
	deferred := func(s *corev1.PodStatus) bool {
		c, ok := findCondition(s, corev1.PodResizePending)
		return ok && c.Reason == corev1.PodReasonDeferred && s.ObservedGeneration == 2
	}
	h.eventually(pod.UID, "Deferred", deferred)
	s := h.status(pod.UID)
	c, _ := findCondition(s, corev1.PodResizePending)
	assert.Equal(t, "Node didn't have enough resource: cpu, requested: 500, used: 600, capacity: 1000", c.Message)
	assert.Equal(t, int64(2), c.ObservedGeneration)
	assert.Equal(t, "300m", s.ContainerStatuses[0].AllocatedResources.Cpu().String(), "still allocated what it had")
	assert.Equal(t, "300m", s.ContainerStatuses[0].Resources.Limits.Cpu().String())
	assert.Contains(t, strings.Join(h.drainEvents(), "\n"), "Warning ResizeDeferred Pod resize OutOfcpu: ")
	assert.Empty(t, rr.updated())

	// The agent restarts: the allocation is the one recorded, not the deferred resize; a new
	// instance starts with it.
	h.stop()
	h.start()
	require.NoError(t, h.p.UpdatePod(ctx, resized(pod, "500m", "100Mi")))
	h.eventually(pod.UID, "Deferred after a restart", deferred)
	assert.Equal(t, "300m", h.status(pod.UID).ContainerStatuses[0].AllocatedResources.Cpu().String())
	h.rt.exit(h.rt.running("web"), 1)
	h.eventually(pod.UID, "restarted", func(s *corev1.PodStatus) bool {
		return s.ContainerStatuses[0].RestartCount == 1 && s.ContainerStatuses[0].State.Running != nil
	})
	cfg := h.rt.configOf(h.rt.running("web"))
	assert.Equal(t, "300m", cfg.Container.Resources.Limits.Cpu().String(), "created with the allocation, not the deferred resize")
	assert.Empty(t, rr.updated())

	// The big pod leaves: the resize fits, and is applied.
	require.NoError(t, h.p.DeletePod(ctx, big))
	h.eventually(pod.UID, "resized", statusResourcesAre(2, "500m", "100Mi"))
	assert.Len(t, rr.updated(), 1)
}

// On a runtime that cannot resize in place, a resize that needs it is Infeasible, with the
// kubelet's message and event, and the container keeps its resources.
func TestResizeInfeasibleWithoutInPlaceUpdates(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	pod := guaranteed(testPod("infeasible", corev1.RestartPolicyAlways, ctr("app", "sleep", "1000")), "200m", "100Mi")
	pod.Generation = 1
	require.NoError(t, h.p.CreatePod(ctx, pod))
	h.eventually(pod.UID, "Running", running)
	id := h.rt.running("app")

	require.NoError(t, h.p.UpdatePod(ctx, resized(pod, "300m", "100Mi")))
	h.eventually(pod.UID, "Infeasible", func(s *corev1.PodStatus) bool {
		c, ok := findCondition(s, corev1.PodResizePending)
		return ok && c.Reason == corev1.PodReasonInfeasible && c.Message == "In-place pod resize is not supported on this node"
	})
	assert.Equal(t, "200m", h.status(pod.UID).ContainerStatuses[0].AllocatedResources.Cpu().String())
	assert.Equal(t, id, h.rt.running("app"))
	assert.Contains(t, strings.Join(h.drainEvents(), "\n"), "Warning ResizeInfeasible Pod resize Infeasible: ")

	// Asked back to what it has, the condition goes.
	back := resized(pod, "200m", "100Mi")
	back.Generation = 3
	require.NoError(t, h.p.UpdatePod(ctx, back))
	h.eventually(pod.UID, "no longer pending", statusResourcesAre(3, "200m", "100Mi"))
}

// A resize the runtime fails to apply is in progress with reason Error and the runtime's
// message, and is tried again until it is applied, across an agent restart: the allocation and
// what was applied are recorded.
func TestResizeErrorRetriedAcrossRestarts(t *testing.T) {
	h, rr := resizeHarness(t, nil)
	ctx := context.Background()
	pod := guaranteed(testPod("failing", corev1.RestartPolicyAlways, ctr("app", "sleep", "1000")), "200m", "100Mi")
	pod.Generation = 1
	require.NoError(t, h.p.CreatePod(ctx, pod))
	h.eventually(pod.UID, "Running", running)
	rr.mu.Lock()
	rr.fail = fmt.Errorf("cgroup busy")
	rr.mu.Unlock()

	require.NoError(t, h.p.UpdatePod(ctx, resized(pod, "300m", "100Mi")))
	h.eventually(pod.UID, "in progress with an error", func(s *corev1.PodStatus) bool {
		c, ok := findCondition(s, corev1.PodResizeInProgress)
		return ok && c.Reason == "Error" && c.Message == "cgroup busy" && c.ObservedGeneration == 2
	})
	assert.Equal(t, "300m", h.status(pod.UID).ContainerStatuses[0].AllocatedResources.Cpu().String(), "allocated")
	assert.Equal(t, "200m", h.status(pod.UID).ContainerStatuses[0].Resources.Limits.Cpu().String(), "not applied")

	h.stop()
	rr.mu.Lock()
	rr.fail = nil
	rr.mu.Unlock()
	h.start()
	h.eventually(pod.UID, "applied after the restart", statusResourcesAre(2, "300m", "100Mi"))
	assert.Len(t, rr.updated(), 1)
}
