package mock

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/podstatus"
	"github.com/vk-static/vk-static/podutil"
	"github.com/vk-static/vk-static/provider"
)

var epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// harness is a provider on a fake clock whose notifications land in a channel.
type harness struct {
	p     *Provider
	clock *clocktesting.FakeClock
	seen  chan *corev1.Pod
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	t.Cleanup(func() { goleak.VerifyNone(t) })
	fc := clocktesting.NewFakeClock(epoch)
	p, err := New(Config{NodeName: "node-a", InternalIP: "10.1.2.3", Clock: fc, RecordCalls: true})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	h := &harness{p: p, clock: fc, seen: make(chan *corev1.Pod, 1000)}
	p.NotifyPods(ctx, func(pod *corev1.Pod) {
		select {
		case h.seen <- pod:
		case <-ctx.Done(): // a test that stopped reading
		}
	})
	return h
}

// next waits for a notification about name whose status satisfies ok; other notifications are dropped.
func (h *harness) next(t *testing.T, name string, ok func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case pod := <-h.seen:
			if pod.Name == name && ok(pod) {
				return pod
			}
		case <-deadline:
			t.Fatalf("no notification for %s matching the condition", name)
			return nil
		}
	}
}

// step advances the fake clock once the provider's background loop waits on a timer, so that
// the step can never fall between its reading of the clock and its setting of the timer.
func (h *harness) step(t *testing.T, d time.Duration) {
	t.Helper()
	require.Eventually(t, h.clock.HasWaiters, 10*time.Second, time.Millisecond, "the provider never waited on a timer")
	h.clock.Step(d)
}

func phase(want corev1.PodPhase) func(*corev1.Pod) bool {
	return func(p *corev1.Pod) bool { return p.Status.Phase == want }
}

func newPod(name string, annotations map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns", Name: name, UID: types.UID("uid-" + name), Annotations: annotations,
		},
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "init", Image: "busybox"}},
			Containers:     []corev1.Container{{Name: "app", Image: "nginx:1"}, {Name: "side", Image: "busybox"}},
		},
	}
}

func conditionStatus(pod *corev1.Pod, typ corev1.PodConditionType) corev1.ConditionStatus {
	for _, c := range pod.Status.Conditions {
		if c.Type == typ {
			return c.Status
		}
	}
	return "missing"
}

func TestNewValidatesConfig(t *testing.T) {
	for name, cfg := range map[string]Config{
		"no node name": {InternalIP: "10.0.0.1"},
		"bad ip":       {NodeName: "n", InternalIP: "nope"},
		"bad pod ip":   {NodeName: "n", InternalIP: "10.0.0.1", PodIP: "x"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := New(cfg)
			assert.Error(t, err)
		})
	}
}

func TestCreatePodRunsAtOnce(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	require.NoError(t, h.p.CreatePod(ctx, newPod("web", nil)))

	pod := h.next(t, "web", phase(corev1.PodRunning))
	assert.Equal(t, types.UID("uid-web"), pod.UID, "the UID the provider was given")
	assert.Equal(t, "node-a", pod.Spec.NodeName)
	assert.Equal(t, "10.1.2.3", pod.Status.PodIP)
	assert.Equal(t, "10.1.2.3", pod.Status.HostIP)
	require.NotNil(t, pod.Status.StartTime)
	for _, typ := range podstatus.Owned {
		assert.Equal(t, corev1.ConditionTrue, conditionStatus(pod, typ), "condition %s", typ)
	}
	require.Len(t, pod.Status.ContainerStatuses, 2)
	for _, cs := range pod.Status.ContainerStatuses {
		assert.True(t, cs.Ready, cs.Name)
		require.NotNil(t, cs.Started)
		assert.True(t, *cs.Started)
		require.NotNil(t, cs.State.Running, cs.Name)
		assert.Equal(t, epoch, cs.State.Running.StartedAt.Time.UTC())
		assert.Equal(t, "mock://uid-web/"+cs.Name, cs.ContainerID)
		assert.NotEmpty(t, cs.ImageID)
	}
	require.Len(t, pod.Status.InitContainerStatuses, 1)
	require.NotNil(t, pod.Status.InitContainerStatuses[0].State.Terminated)
	assert.Equal(t, "Completed", pod.Status.InitContainerStatuses[0].State.Terminated.Reason)

	got, err := h.p.GetPod(ctx, "ns", "web")
	require.NoError(t, err)
	got.Status.Phase = "Scribbled"
	again, err := h.p.GetPodStatus(ctx, "ns", "web")
	require.NoError(t, err)
	assert.Equal(t, corev1.PodRunning, again.Phase, "GetPod must return a copy")

	pods, err := h.p.GetPods(ctx)
	require.NoError(t, err)
	assert.Len(t, pods, 1)
	assert.Equal(t, Calls{Create: 1}, h.p.Calls("uid-web"))
}

func TestCreatePodTwice(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	require.NoError(t, h.p.CreatePod(ctx, newPod("web", nil)))
	require.NoError(t, h.p.CreatePod(ctx, newPod("web", nil)), "same UID again changes nothing")
	assert.Equal(t, Calls{Create: 2}, h.p.Calls("uid-web"))

	edited := newPod("web", nil)
	edited.UID = "uid-web-2"
	err := h.p.CreatePod(ctx, edited)
	require.Error(t, err, "a new UID must wait for the old one to terminate")
	assert.False(t, provider.IsInvalidInput(err), "retrying after the old pod terminates will work")

	require.NoError(t, h.p.DeletePod(ctx, newPod("web", nil)))
	require.NoError(t, h.p.CreatePod(ctx, edited))
	pod, err := h.p.GetPod(ctx, "ns", "web")
	require.NoError(t, err)
	assert.Equal(t, types.UID("uid-web-2"), pod.UID)
}

func TestDeletePod(t *testing.T) {
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		wantPhase   corev1.PodPhase
		wantCode    int32
		wantReason  string
	}{
		{name: "default", wantPhase: corev1.PodSucceeded, wantReason: "Completed"},
		{name: "exit code", annotations: map[string]string{ExitCodeAnnotation: "3"}, wantPhase: corev1.PodFailed, wantCode: 3, wantReason: "Error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			ctx := context.Background()
			pod := newPod("web", tc.annotations)
			require.NoError(t, h.p.CreatePod(ctx, pod))
			require.NoError(t, h.p.DeletePod(ctx, pod))

			done := h.next(t, "web", func(p *corev1.Pod) bool { return p.Status.Phase != corev1.PodRunning })
			assert.Equal(t, tc.wantPhase, done.Status.Phase)
			assert.NotNil(t, done.DeletionTimestamp)
			assert.Equal(t, corev1.ConditionFalse, conditionStatus(done, corev1.PodReady))
			for _, cs := range done.Status.ContainerStatuses {
				require.NotNil(t, cs.State.Terminated, cs.Name)
				assert.Equal(t, tc.wantCode, cs.State.Terminated.ExitCode)
				assert.Equal(t, tc.wantReason, cs.State.Terminated.Reason)
				assert.False(t, cs.Ready)
			}

			_, err := h.p.GetPod(ctx, "ns", "web")
			assert.True(t, provider.IsNotFound(err), "a deleted pod is forgotten: %v", err)
			assert.True(t, provider.IsNotFound(h.p.DeletePod(ctx, pod)), "deleting again")
			assert.Equal(t, Calls{Create: 1, Delete: 2}, h.p.Calls(pod.UID))
		})
	}
}

func TestUnknownPodIsNotFound(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	pod := newPod("ghost", nil)
	assert.True(t, provider.IsNotFound(h.p.DeletePod(ctx, pod)))
	assert.True(t, provider.IsNotFound(h.p.UpdatePod(ctx, pod)))
	_, err := h.p.GetPodStatus(ctx, "ns", "ghost")
	assert.True(t, provider.IsNotFound(err))

	require.NoError(t, h.p.CreatePod(ctx, pod))
	other := newPod("ghost", nil)
	other.UID = "another"
	assert.True(t, provider.IsNotFound(h.p.DeletePod(ctx, other)), "same name, other UID")
}

func TestFailureInjection(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()

	err := h.p.CreatePod(ctx, newPod("invalid", map[string]string{CreateInvalidAnnotation: "no such runtime"}))
	assert.True(t, provider.IsInvalidInput(err), "%v", err)

	err = h.p.CreatePod(ctx, newPod("typo", map[string]string{CreateDelayAnnotation: "soon"}))
	assert.True(t, provider.IsInvalidInput(err), "a malformed annotation: %v", err)
	assert.ErrorContains(t, err, CreateDelayAnnotation)

	always := newPod("always", map[string]string{CreateErrorAnnotation: "boom"})
	for range 3 {
		err := h.p.CreatePod(ctx, always)
		assert.ErrorContains(t, err, "boom")
		assert.False(t, provider.IsInvalidInput(err))
	}

	twice := newPod("twice", map[string]string{CreateErrorAnnotation: "boom", CreateErrorTimesAnnotation: "2"})
	assert.Error(t, h.p.CreatePod(ctx, twice))
	assert.Error(t, h.p.CreatePod(ctx, twice))
	assert.NoError(t, h.p.CreatePod(ctx, twice))
	assert.Equal(t, Calls{Create: 3}, h.p.Calls(twice.UID))

	stuck := newPod("stuck", map[string]string{DeleteErrorAnnotation: "busy"})
	require.NoError(t, h.p.CreatePod(ctx, stuck))
	assert.ErrorContains(t, h.p.DeletePod(ctx, stuck), "busy")
}

// Without Config.RecordCalls nothing is counted — the agent and the benchmarks create pods
// without end — and Calls says so instead of answering zeros; create-error-times, which needs
// a count of its own, still fails only the first N calls.
func TestCallsAreRecordedOnlyWhenAsked(t *testing.T) {
	p, err := New(Config{NodeName: "node-a", InternalIP: "10.1.2.3"})
	require.NoError(t, err)
	ctx := context.Background()
	for i := range 100 {
		pod := newPod(fmt.Sprint("p-", i), nil)
		require.NoError(t, p.CreatePod(ctx, pod))
		require.NoError(t, p.UpdatePod(ctx, pod))
		require.NoError(t, p.DeletePod(ctx, pod))
	}
	assert.Empty(t, p.calls, "calls recorded without RecordCalls")
	assert.PanicsWithValue(t,
		"mock: Provider.Calls without Config.RecordCalls: no call was counted; set RecordCalls in the test's mock.Config",
		func() { p.Calls("uid-p-0") })

	twice := newPod("twice", map[string]string{CreateErrorAnnotation: "boom", CreateErrorTimesAnnotation: "2"})
	assert.Error(t, p.CreatePod(ctx, twice))
	assert.Error(t, p.CreatePod(ctx, twice))
	assert.NoError(t, p.CreatePod(ctx, twice))
	assert.NoError(t, p.CreatePod(ctx, twice), "the same UID again: running, no third failure")
	assert.Equal(t, map[types.UID]int{twice.UID: 4}, p.createAttempts, "only create-error-times pods are counted")
}

func TestCreateDelay(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	require.NoError(t, h.p.CreatePod(ctx, newPod("slow", map[string]string{CreateDelayAnnotation: "500ms"})))

	pending := h.next(t, "slow", phase(corev1.PodPending))
	assert.Equal(t, corev1.ConditionTrue, conditionStatus(pending, corev1.PodScheduled))
	assert.Equal(t, corev1.ConditionFalse, conditionStatus(pending, corev1.PodReady))
	assert.Equal(t, "ContainerCreating", pending.Status.ContainerStatuses[0].State.Waiting.Reason)

	h.step(t, 499*time.Millisecond)
	st, err := h.p.GetPodStatus(ctx, "ns", "slow")
	require.NoError(t, err)
	assert.Equal(t, corev1.PodPending, st.Phase)

	h.step(t, time.Millisecond)
	running := h.next(t, "slow", phase(corev1.PodRunning))
	assert.Equal(t, epoch.Add(500*time.Millisecond), running.Status.ContainerStatuses[0].State.Running.StartedAt.Time.UTC())
}

func TestDeleteDelay(t *testing.T) {
	grace := func(s int64) *int64 { return &s }
	for _, tc := range []struct {
		name  string
		delay string
		grace *int64
		want  time.Duration
	}{
		{name: "delay", delay: "2s", want: 2 * time.Second},
		{name: "capped at grace", delay: "1m", grace: grace(3), want: 3 * time.Second},
		{name: "whole grace period", delay: DeleteDelayGrace, grace: grace(5), want: 5 * time.Second},
		{name: "default grace", delay: DeleteDelayGrace, want: 30 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			ctx := context.Background()
			pod := newPod("web", map[string]string{DeleteDelayAnnotation: tc.delay})
			require.NoError(t, h.p.CreatePod(ctx, pod))
			deleting := pod.DeepCopy()
			deleting.DeletionGracePeriodSeconds = tc.grace
			require.NoError(t, h.p.DeletePod(ctx, deleting))
			require.NoError(t, h.p.DeletePod(ctx, deleting), "DeletePod may be called again while stopping")

			stopping := h.next(t, "web", func(p *corev1.Pod) bool { return p.DeletionTimestamp != nil })
			assert.Equal(t, corev1.PodRunning, stopping.Status.Phase, "containers keep running during shutdown")

			h.step(t, tc.want-time.Millisecond)
			_, err := h.p.GetPod(ctx, "ns", "web")
			require.NoError(t, err, "still stopping")
			h.step(t, time.Millisecond)
			done := h.next(t, "web", phase(corev1.PodSucceeded))
			assert.Equal(t, epoch.Add(tc.want), done.Status.ContainerStatuses[0].State.Terminated.FinishedAt.Time.UTC())
			_, err = h.p.GetPod(ctx, "ns", "web")
			assert.True(t, provider.IsNotFound(err))
		})
	}
}

func TestRunDuration(t *testing.T) {
	for _, tc := range []struct {
		name     string
		policy   corev1.RestartPolicy
		exitCode string
		want     corev1.PodPhase
	}{
		{name: "never succeeds", policy: corev1.RestartPolicyNever, exitCode: "0", want: corev1.PodSucceeded},
		{name: "never fails", policy: corev1.RestartPolicyNever, exitCode: "1", want: corev1.PodFailed},
		{name: "on failure succeeds", policy: corev1.RestartPolicyOnFailure, exitCode: "0", want: corev1.PodSucceeded},
		{name: "always keeps running", policy: corev1.RestartPolicyAlways, exitCode: "0", want: corev1.PodRunning},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			ctx := context.Background()
			pod := newPod("job", map[string]string{RunDurationAnnotation: "1s", ExitCodeAnnotation: tc.exitCode})
			pod.Spec.RestartPolicy = tc.policy
			require.NoError(t, h.p.CreatePod(ctx, pod))
			h.next(t, "job", phase(corev1.PodRunning))
			if tc.want == corev1.PodRunning {
				// Nothing is scheduled for a pod that keeps running, so there is no timer to wait for.
				h.clock.Step(time.Second)
				// A sentinel pod created after the step is notified after anything the step caused.
				require.NoError(t, h.p.CreatePod(ctx, newPod("sentinel", nil)))
				h.next(t, "sentinel", phase(corev1.PodRunning))
				st, err := h.p.GetPodStatus(ctx, "ns", "job")
				require.NoError(t, err)
				assert.Equal(t, corev1.PodRunning, st.Phase)
				return
			}
			h.step(t, time.Second)
			done := h.next(t, "job", phase(tc.want))
			assert.Nil(t, done.DeletionTimestamp)
			_, err := h.p.GetPod(ctx, "ns", "job")
			require.NoError(t, err, "a finished pod stays until deleted")
			require.NoError(t, h.p.DeletePod(ctx, pod))
			h.next(t, "job", func(p *corev1.Pod) bool { return p.DeletionTimestamp != nil && p.Status.Phase == tc.want })
		})
	}
}

func TestUpdatePodRestartsChangedContainers(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	pod := newPod("web", nil)
	require.NoError(t, h.p.CreatePod(ctx, pod))
	h.clock.Step(time.Minute)
	pod.Spec.Containers[0].Image = "nginx:2"
	require.NoError(t, h.p.UpdatePod(ctx, pod))

	got := h.next(t, "web", func(p *corev1.Pod) bool { return p.Status.ContainerStatuses[0].Image == "nginx:2" })
	app, side := got.Status.ContainerStatuses[0], got.Status.ContainerStatuses[1]
	assert.Equal(t, int32(1), app.RestartCount)
	assert.Equal(t, epoch.Add(time.Minute), app.State.Running.StartedAt.Time.UTC())
	assert.Equal(t, int32(0), side.RestartCount)
	assert.Equal(t, "nginx:2", got.Spec.Containers[0].Image)
	assert.Equal(t, Calls{Create: 1, Update: 1}, h.p.Calls(pod.UID))
}

func TestNotificationsCoalesceAndDoNotBlock(t *testing.T) {
	defer goleak.VerifyNone(t)
	p, err := New(Config{NodeName: "node-a", InternalIP: "10.1.2.3"})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	release := make(chan struct{})
	var mu sync.Mutex
	var got []*corev1.Pod
	p.NotifyPods(ctx, func(pod *corev1.Pod) {
		<-release // a slow consumer
		mu.Lock()
		got = append(got, pod)
		mu.Unlock()
	})

	pod := newPod("web", nil)
	require.NoError(t, p.CreatePod(ctx, pod)) // the goroutine blocks delivering this one
	for i := range 50 {                       // none of these may block on the slow consumer
		pod.Spec.Containers[0].Image = fmt.Sprintf("nginx:%d", i)
		require.NoError(t, p.UpdatePod(ctx, pod))
	}
	close(release)

	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) > 0 && got[len(got)-1].Spec.Containers[0].Image == "nginx:49"
	}, 10*time.Second, time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	assert.LessOrEqual(t, len(got), 3, "51 changes while the consumer was busy must coalesce")
}

func TestConcurrentLifecycles(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	const workers, perWorker = 8, 200
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWorker {
				pod := newPod(fmt.Sprintf("p-%d-%d", w, i), nil)
				assert.NoError(t, h.p.CreatePod(ctx, pod))
				if i%50 == 0 { // the full listing races with the writers, but is slow under -race
					_, err := h.p.GetPods(ctx)
					assert.NoError(t, err)
				}
				_, _ = h.p.GetPodStatus(ctx, pod.Namespace, pod.Name)
				if i%2 == 0 {
					assert.NoError(t, h.p.DeletePod(ctx, pod))
				}
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, workers*perWorker/2, h.p.Len())
}

func TestNodeHelpers(t *testing.T) {
	p, err := New(Config{NodeName: "node-a", InternalIP: "10.1.2.3"})
	require.NoError(t, err)
	n := &corev1.Node{}
	p.ConfigureNode(n)
	assert.Equal(t, "110", n.Status.Capacity.Pods().String())
	assert.Equal(t, n.Status.Capacity, n.Status.Allocatable)
	assert.Equal(t, []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.1.2.3"}}, n.Status.Addresses)
	assert.Empty(t, n.Status.Conditions, "the node controller writes the conditions, once for every provider")
	assert.Equal(t, []corev1.Taint{{Key: "virtual-kubelet.io/provider", Value: "mock", Effect: corev1.TaintEffectNoSchedule}}, n.Spec.Taints)

	ctx := context.Background()
	assert.NoError(t, p.Ping(ctx))
	p.SetPingError(fmt.Errorf("backend down"))
	assert.ErrorContains(t, p.Ping(ctx), "backend down")

	var reported *corev1.Node
	p.NotifyNodeStatus(ctx, func(n *corev1.Node) { reported = n })
	p.ReportNodeStatus(n)
	assert.Same(t, n, reported)
}

// A simulated node must not attract real workloads: ConfigureNode taints it NoSchedule, keeping
// the caller's taints and never adding a second taint with the same key and effect.
func TestConfigureNodeTaint(t *testing.T) {
	p, err := New(Config{NodeName: "node-a", InternalIP: "10.1.2.3"})
	require.NoError(t, err)
	user := corev1.Taint{Key: "dedicated", Value: "edge", Effect: corev1.TaintEffectNoSchedule}
	n := &corev1.Node{Spec: corev1.NodeSpec{Taints: []corev1.Taint{user}}}
	p.ConfigureNode(n)
	assert.Equal(t, []corev1.Taint{user, Taint()}, n.Spec.Taints)

	p.ConfigureNode(n) // again: no duplicate
	assert.Equal(t, []corev1.Taint{user, Taint()}, n.Spec.Taints)

	own := corev1.Taint{Key: ProviderTaintKey, Value: "simulator", Effect: corev1.TaintEffectNoSchedule}
	n = &corev1.Node{Spec: corev1.NodeSpec{Taints: []corev1.Taint{own}}}
	p.ConfigureNode(n)
	assert.Equal(t, []corev1.Taint{own}, n.Spec.Taints, "the caller's taint with the same key and effect wins")
}

// The provider keeps of a pod what it reads and what restart adoption needs, not the rest.
func TestPodIsKeptTrimmed(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	pod := newPod("web", map[string]string{"kubernetes.io/config.source": "file"})
	pod.Labels = map[string]string{"app": "web"}
	pod.Spec.Hostname = "host"
	pod.Spec.TerminationGracePeriodSeconds = ptr.To[int64](7)
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	pod.Spec.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}}
	pod.Spec.SecurityContext = &corev1.PodSecurityContext{}
	pod.Spec.Volumes = []corev1.Volume{{Name: "v"}}
	always := corev1.ContainerRestartPolicyAlways
	pod.Spec.InitContainers[0].RestartPolicy = &always
	app := &pod.Spec.Containers[0]
	app.Ports = []corev1.ContainerPort{{ContainerPort: 80}}
	app.Env = []corev1.EnvVar{{Name: "A", Value: "1"}}
	app.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}
	app.Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	app.VolumeMounts = []corev1.VolumeMount{{Name: "v", MountPath: "/v"}}
	app.ReadinessProbe = &corev1.Probe{}
	require.NoError(t, h.p.CreatePod(ctx, pod))

	got, err := h.p.GetPod(ctx, "ns", "web")
	require.NoError(t, err)
	assert.Equal(t, metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "uid-web", Annotations: map[string]string{"kubernetes.io/config.source": "file"}}, got.ObjectMeta)
	assert.Equal(t, corev1.PodSpec{
		NodeName: "node-a", Hostname: "host", RestartPolicy: corev1.RestartPolicyNever, TerminationGracePeriodSeconds: ptr.To[int64](7),
		InitContainers: []corev1.Container{{Name: "init", Image: "busybox", RestartPolicy: &always}},
		Containers: []corev1.Container{
			{
				Name: "app", Image: "nginx:1", Ports: []corev1.ContainerPort{{ContainerPort: 80}}, Env: []corev1.EnvVar{{Name: "A", Value: "1"}},
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}},
			},
			{Name: "side", Image: "busybox"},
		},
	}, got.Spec)

	update := newPod("web", map[string]string{"kubernetes.io/config.source": "api", "new": "yes"})
	update.Labels = map[string]string{"app": "web2"}
	update.Spec.Tolerations = []corev1.Toleration{{Key: "k2", Operator: corev1.TolerationOpExists}}
	require.NoError(t, h.p.UpdatePod(ctx, update))
	got, err = h.p.GetPod(ctx, "ns", "web")
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"kubernetes.io/config.source": "api", "new": "yes"}, got.Annotations)
	assert.Nil(t, got.Labels)
	assert.Nil(t, got.Spec.Tolerations)
	assert.Equal(t, "node-a", got.Spec.NodeName)
}

// API pods without annotations of their own share one map in the provider; what GetPod returns
// is still the caller's to modify.
func TestSharedAnnotationsAreCopiedOut(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	for _, name := range []string{"a", "b"} {
		require.NoError(t, h.p.CreatePod(ctx, newPod(name, map[string]string{podutil.ConfigSourceAnnotationKey: podutil.APIServerSource})))
	}
	a, err := h.p.GetPod(ctx, "ns", "a")
	require.NoError(t, err)
	a.Annotations["scribbled"] = "yes"
	for _, name := range []string{"a", "b"} {
		got, err := h.p.GetPod(ctx, "ns", name)
		require.NoError(t, err)
		assert.Equal(t, map[string]string{podutil.ConfigSourceAnnotationKey: podutil.APIServerSource}, got.Annotations, name)
	}
}

// Pods that start within the same second share one list of conditions, in whole seconds; a pod
// started in the next second has its own, and a pod's later status never writes to the shared
// one.
func TestStartedPodsShareTheirSecondsConditions(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	h.clock.SetTime(epoch.Add(100 * time.Millisecond))
	require.NoError(t, h.p.CreatePod(ctx, newPod("a", nil)))
	h.clock.SetTime(epoch.Add(900 * time.Millisecond))
	require.NoError(t, h.p.CreatePod(ctx, newPod("b", nil)))
	h.clock.SetTime(epoch.Add(1100 * time.Millisecond))
	require.NoError(t, h.p.CreatePod(ctx, newPod("c", nil)))
	recs := map[string]*podRecord{}
	for _, name := range []string{"a", "b", "c"} {
		rec, err := h.p.record("ns", name)
		require.NoError(t, err)
		recs[name] = rec
		require.Len(t, rec.status.conditions, len(podstatus.Owned))
		assert.Len(t, rec.status.conditions, cap(rec.status.conditions), "no room for an append to write into")
	}
	assert.Same(t, &recs["a"].status.conditions[0], &recs["b"].status.conditions[0])
	assert.Same(t, h.p.baseStatus, recs["a"].status.rest, "the addresses, the rest of every status, are shared")
	assert.NotSame(t, &recs["a"].status.conditions[0], &recs["c"].status.conditions[0])
	for i, typ := range podstatus.Owned {
		c := recs["a"].status.conditions[i]
		assert.Equal(t, typ, c.Type)
		assert.Equal(t, corev1.ConditionTrue, c.Status)
		assert.Equal(t, epoch, c.LastTransitionTime.Time.UTC(), "whole seconds")
		assert.Equal(t, epoch.Add(time.Second), recs["c"].status.conditions[i].LastTransitionTime.Time.UTC())
	}

	require.NoError(t, h.p.DeletePod(ctx, newPod("a", nil)))
	h.next(t, "a", phase(corev1.PodSucceeded))
	for _, c := range recs["b"].status.conditions {
		assert.Equal(t, corev1.ConditionTrue, c.Status, "b's conditions, shared with a's, unchanged by a's end")
	}
}
