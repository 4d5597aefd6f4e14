package lifecycle

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/nodeobjects"
	"github.com/vk-static/vk-static/provider"
)

// harness runs a Provider on a fakeRuntime and a fake clock, and keeps the last status it
// reported for each pod.
type harness struct {
	t     *testing.T
	clock *clocktesting.FakeClock
	rt    *fakeRuntime
	// runtime is what the provider runs on: rt, or a wrapper of it (images).
	runtime Runtime
	objects *fakeObjects // nil: no API server
	// configure, if set, changes the provider's Config before each start.
	configure func(*Config)
	root      string
	p         *Provider

	events *record.FakeRecorder

	mu       sync.Mutex
	reported map[types.UID]*corev1.Pod
	cancel   context.CancelFunc
	done     chan struct{}
}

func newHarness(t *testing.T) *harness {
	h := &harness{t: t, clock: clocktesting.NewFakeClock(time.Date(2026, 11, 23, 7, 0, 0, 0, time.UTC)), root: t.TempDir(),
		events: record.NewFakeRecorder(1000)}
	h.rt = newFakeRuntime(h.clock)
	h.runtime = h.rt
	h.start()
	return h
}

// start builds and runs a provider on the harness's runtime and root directory, as an agent
// (re)starting does.
func (h *harness) start() {
	h.t.Helper()
	cfg := Config{
		Runtime: h.runtime, RuntimeName: "fake", Objects: h.objectGetter(), RootDir: h.root, NodeIPs: []string{"127.0.0.1"}, Clock: h.clock, Recorder: h.events,
	}
	if h.configure != nil {
		h.configure(&cfg)
	}
	p, err := New(context.Background(), cfg)
	require.NoError(h.t, err)
	h.p = p
	h.mu.Lock()
	h.reported = map[types.UID]*corev1.Pod{}
	h.mu.Unlock()
	p.NotifyPods(context.Background(), func(pod *corev1.Pod) {
		h.mu.Lock()
		h.reported[pod.UID] = pod
		h.mu.Unlock()
	})
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel, h.done = cancel, make(chan struct{})
	go func() {
		defer close(h.done)
		assert.NoError(h.t, p.Run(ctx))
	}()
	h.t.Cleanup(h.stop)
}

func (h *harness) objectGetter() nodeobjects.ObjectGetter {
	if h.objects == nil {
		return nil
	}
	return h.objects
}

// stop stops the provider (the agent stops; containers keep running).
func (h *harness) stop() {
	h.cancel()
	<-h.done
}

func (h *harness) status(uid types.UID) *corev1.PodStatus {
	h.mu.Lock()
	defer h.mu.Unlock()
	if pod := h.reported[uid]; pod != nil {
		return &pod.Status
	}
	return nil
}

// eventually waits until the last reported status of uid satisfies cond.
func (h *harness) eventually(uid types.UID, what string, cond func(*corev1.PodStatus) bool) {
	h.t.Helper()
	if !assert.Eventually(h.t, func() bool {
		s := h.status(uid)
		return s != nil && cond(s)
	}, 10*time.Second, 5*time.Millisecond) {
		h.t.Fatalf("pod %s never: %s (last status %+v; events %v)", uid, what, h.status(uid), h.drainEvents())
	}
}

// drainEvents returns the events recorded so far.
func (h *harness) drainEvents() []string {
	var out []string
	for {
		select {
		case e := <-h.events.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// step moves the fake clock once the provider waits on a timer.
func (h *harness) step(d time.Duration) {
	h.t.Helper()
	require.Eventually(h.t, h.clock.HasWaiters, 5*time.Second, time.Millisecond)
	h.clock.Step(d)
}

func testPod(uid string, restart corev1.RestartPolicy, containers ...corev1.Container) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p-" + uid, Namespace: "default", UID: types.UID(uid)},
		Spec:       corev1.PodSpec{RestartPolicy: restart, Containers: containers, TerminationGracePeriodSeconds: ptr.To[int64](12)},
	}
}

func ctr(name string, argv ...string) corev1.Container {
	return corev1.Container{Name: name, Image: "busybox", Command: argv}
}

func mainState(s *corev1.PodStatus, i int) corev1.ContainerState { return s.ContainerStatuses[i].State }

func TestInitContainersRunInOrderThenMainContainers(t *testing.T) {
	h := newHarness(t)
	pod := testPod("u1", corev1.RestartPolicyAlways, ctr("main", "sleep", "1000"))
	pod.Spec.InitContainers = []corev1.Container{ctr("first", "true"), ctr("second", "true")}
	require.NoError(t, h.p.CreatePod(context.Background(), pod))

	h.eventually(pod.UID, "first init container running", func(s *corev1.PodStatus) bool {
		return s.Phase == corev1.PodPending && s.InitContainerStatuses[0].State.Running != nil
	})
	assert.Equal(t, []string{"start first#0"}, h.rt.calls(), "only the first init container runs")
	h.rt.exit(h.rt.running("first"), 0)
	h.eventually(pod.UID, "second init container running", func(s *corev1.PodStatus) bool {
		return s.InitContainerStatuses[1].State.Running != nil && s.InitContainerStatuses[0].State.Terminated.Reason == "Completed"
	})
	assert.Equal(t, "PodInitializing", h.status(pod.UID).ContainerStatuses[0].State.Waiting.Reason)
	assert.True(t, h.status(pod.UID).InitContainerStatuses[0].Ready, "a completed init container is ready")
	h.rt.exit(h.rt.running("second"), 0)
	h.eventually(pod.UID, "Running and Ready", func(s *corev1.PodStatus) bool {
		return s.Phase == corev1.PodRunning && mainState(s, 0).Running != nil && s.ContainerStatuses[0].Ready
	})
	assert.Equal(t, []string{"start first#0", "start second#0", "start main#0"}, h.rt.calls())
	assert.Equal(t, "fake://", h.status(pod.UID).ContainerStatuses[0].ContainerID[:7])
	for _, c := range h.status(pod.UID).Conditions {
		assert.Equal(t, corev1.ConditionTrue, c.Status, "condition %s", c.Type)
	}
}

func TestCrashLoopBackOffGrowsAndShowsTheLastExit(t *testing.T) {
	h := newHarness(t)
	pod := testPod("u2", corev1.RestartPolicyAlways, ctr("crash", "false"))
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	h.eventually(pod.UID, "running", func(s *corev1.PodStatus) bool { return mainState(s, 0).Running != nil })

	// The first restart is immediate, as the kubelet's.
	h.rt.exit(h.rt.running("crash"), 1)
	h.eventually(pod.UID, "restarted once", func(s *corev1.PodStatus) bool {
		return s.ContainerStatuses[0].RestartCount == 1 && mainState(s, 0).Running != nil
	})
	// The second waits 10 s, then 20 s.
	for i, wait := range []time.Duration{10 * time.Second, 20 * time.Second} {
		h.rt.exit(h.rt.running("crash"), 2)
		h.eventually(pod.UID, "in CrashLoopBackOff", func(s *corev1.PodStatus) bool {
			cs := s.ContainerStatuses[0]
			return cs.State.Waiting != nil && cs.State.Waiting.Reason == "CrashLoopBackOff" &&
				cs.LastTerminationState.Terminated != nil && cs.LastTerminationState.Terminated.ExitCode == 2
		})
		assert.Contains(t, h.status(pod.UID).ContainerStatuses[0].State.Waiting.Message, "back-off "+wait.String())
		assert.Equal(t, corev1.PodRunning, h.status(pod.UID).Phase, "a pod that restarts is Running")
		h.step(wait - time.Second)
		assert.Equal(t, int32(i+1), h.status(pod.UID).ContainerStatuses[0].RestartCount, "restarted before its back-off ended")
		h.step(time.Second)
		h.eventually(pod.UID, "restarted after the back-off", func(s *corev1.PodStatus) bool {
			return s.ContainerStatuses[0].RestartCount == int32(i+2) && mainState(s, 0).Running != nil
		})
	}
}

// TestCrashLoopBackOffStartsOverAfterALongRun: a container that ran 10 minutes before it
// exited is restarted at once, and its next back-off is the first one again, as the kubelet's.
func TestCrashLoopBackOffStartsOverAfterALongRun(t *testing.T) {
	h := newHarness(t)
	pod := testPod("u2r", corev1.RestartPolicyAlways, ctr("crash", "false"))
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	h.eventually(pod.UID, "running", func(s *corev1.PodStatus) bool { return mainState(s, 0).Running != nil })
	restarted := func(n int32) {
		t.Helper()
		h.eventually(pod.UID, fmt.Sprintf("restarted %d times", n), func(s *corev1.PodStatus) bool {
			return s.ContainerStatuses[0].RestartCount == n && mainState(s, 0).Running != nil
		})
	}
	backingOff := func(wait time.Duration) {
		t.Helper()
		h.eventually(pod.UID, "in CrashLoopBackOff for "+wait.String(), func(s *corev1.PodStatus) bool {
			w := s.ContainerStatuses[0].State.Waiting
			return w != nil && w.Reason == "CrashLoopBackOff" && strings.Contains(w.Message, "back-off "+wait.String()+" ")
		})
	}

	h.rt.exit(h.rt.running("crash"), 1) // the first restart is immediate
	restarted(1)
	h.rt.exit(h.rt.running("crash"), 1)
	backingOff(10 * time.Second)
	h.step(10 * time.Second)
	restarted(2)

	h.clock.Step(10 * time.Minute) // a long run: restarted at once, and the back-off starts over
	h.rt.exit(h.rt.running("crash"), 1)
	restarted(3)
	h.rt.exit(h.rt.running("crash"), 1)
	backingOff(10 * time.Second)
}

func TestRestartPolicyDecidesThePhase(t *testing.T) {
	for _, tc := range []struct {
		policy corev1.RestartPolicy
		code   int32
		phase  corev1.PodPhase
	}{
		{corev1.RestartPolicyNever, 0, corev1.PodSucceeded},
		{corev1.RestartPolicyNever, 3, corev1.PodFailed},
		{corev1.RestartPolicyOnFailure, 0, corev1.PodSucceeded},
	} {
		t.Run(string(tc.policy), func(t *testing.T) {
			h := newHarness(t)
			pod := testPod("u3", tc.policy, ctr("job", "run"))
			require.NoError(t, h.p.CreatePod(context.Background(), pod))
			h.eventually(pod.UID, "running", func(s *corev1.PodStatus) bool { return mainState(s, 0).Running != nil })
			h.rt.exit(h.rt.running("job"), tc.code)
			h.eventually(pod.UID, "terminal", func(s *corev1.PodStatus) bool { return s.Phase == tc.phase })
			term := mainState(h.status(pod.UID), 0).Terminated
			require.NotNil(t, term)
			assert.Equal(t, tc.code, term.ExitCode)
			assert.Equal(t, []string{"start job#0"}, h.rt.calls(), "not restarted")
		})
	}
}

func TestMissingExecutableSaysWhich(t *testing.T) {
	h := newHarness(t)
	pod := testPod("u4", corev1.RestartPolicyNever, ctr("app", "missing"))
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	h.eventually(pod.UID, "Failed", func(s *corev1.PodStatus) bool { return s.Phase == corev1.PodFailed })
	term := mainState(h.status(pod.UID), 0).Terminated
	assert.Equal(t, "StartError", term.Reason)
	assert.Contains(t, term.Message, `"missing": executable file not found`)
}

func TestContainerWithoutCommandWaitsWithNoCommand(t *testing.T) {
	h := newHarness(t)
	pod := testPod("u5", corev1.RestartPolicyAlways, corev1.Container{Name: "app", Image: "nginx"}, ctr("ok", "sleep", "1"))
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	h.eventually(pod.UID, "NoCommand", func(s *corev1.PodStatus) bool {
		w := mainState(s, 0).Waiting
		return w != nil && w.Reason == "NoCommand" && mainState(s, 1).Running != nil
	})
	assert.Contains(t, mainState(h.status(pod.UID), 0).Waiting.Message, "runs commands, not images")
	assert.Equal(t, corev1.PodPending, h.status(pod.UID).Phase)
}

func TestDeletePodStopsWithinGraceThenForgets(t *testing.T) {
	h := newHarness(t)
	pod := testPod("u6", corev1.RestartPolicyAlways, ctr("a", "sleep"), ctr("b", "sleep"))
	sidecar := ctr("proxy", "sleep")
	sidecar.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
	pod.Spec.InitContainers = []corev1.Container{sidecar}
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	h.eventually(pod.UID, "Running", func(s *corev1.PodStatus) bool {
		return s.Phase == corev1.PodRunning && mainState(s, 1).Running != nil
	})

	require.NoError(t, h.p.DeletePod(context.Background(), pod))
	h.eventually(pod.UID, "terminal", func(s *corev1.PodStatus) bool { return s.Phase == corev1.PodFailed })
	calls := h.rt.calls()
	assert.Equal(t, "stop proxy#0 grace=12s", calls[len(calls)-1], "the sidecar stops last")
	require.Eventually(t, func() bool {
		_, err := h.p.GetPod(context.Background(), pod.Namespace, pod.Name)
		return provider.IsNotFound(err)
	}, 5*time.Second, 5*time.Millisecond, "forgotten once stopped")
	list, _ := h.rt.ListContainers(context.Background())
	assert.Empty(t, list, "containers removed")
}

func TestRestartedAgentAdoptsRunningContainers(t *testing.T) {
	h := newHarness(t)
	pod := testPod("u7", corev1.RestartPolicyAlways, ctr("app", "sleep"))
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	h.eventually(pod.UID, "running", func(s *corev1.PodStatus) bool { return mainState(s, 0).Running != nil })
	h.rt.exit(h.rt.running("app"), 1)
	h.eventually(pod.UID, "restarted", func(s *corev1.PodStatus) bool {
		return s.ContainerStatuses[0].RestartCount == 1 && mainState(s, 0).Running != nil
	})
	started := mainState(h.status(pod.UID), 0).Running.StartedAt

	h.stop()
	h.clock.Step(time.Minute)
	h.start()
	pods, err := h.p.GetPods(context.Background())
	require.NoError(t, err)
	require.Len(t, pods, 1)
	assert.Equal(t, pod.UID, pods[0].UID)
	st := pods[0].Status.ContainerStatuses[0]
	assert.Equal(t, int32(1), st.RestartCount, "same restart count")
	require.NotNil(t, st.State.Running)
	assert.True(t, started.Equal(&st.State.Running.StartedAt), "same start time")
	assert.NotNil(t, st.LastTerminationState.Terminated, "the previous instance is still known")
	require.NoError(t, h.p.CreatePod(context.Background(), pod), "the controller creating it again is no restart")
	assert.Equal(t, []string{"start app#0", "start app#1"}, h.rt.calls(), "nothing started again")
}

func TestRefusedPodFailsAndNeverRuns(t *testing.T) {
	h := newHarness(t)
	h.rt.refuse = "spec.containers[0].securityContext.runAsUser: 0 (root) is not allowed: start the agent with --process-allow-root"
	pod := testPod("u8", corev1.RestartPolicyAlways, ctr("app", "sleep"))
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	h.eventually(pod.UID, "Failed", func(s *corev1.PodStatus) bool { return s.Phase == corev1.PodFailed })
	assert.Contains(t, h.status(pod.UID).Message, "--process-allow-root")
	assert.Empty(t, h.rt.calls())
}

func TestActiveDeadlineStopsThePod(t *testing.T) {
	h := newHarness(t)
	pod := testPod("u9", corev1.RestartPolicyAlways, ctr("app", "sleep"))
	pod.Spec.ActiveDeadlineSeconds = ptr.To[int64](30)
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	h.eventually(pod.UID, "running", func(s *corev1.PodStatus) bool { return mainState(s, 0).Running != nil })
	h.step(30 * time.Second)
	h.eventually(pod.UID, "DeadlineExceeded", func(s *corev1.PodStatus) bool {
		return s.Phase == corev1.PodFailed && s.Reason == "DeadlineExceeded" && mainState(s, 0).Terminated != nil
	})
}

// The kubelet's mergePodStatus: a pod past its deadline is not reported Failed while its
// containers may still run; it is once they have stopped.
func TestActiveDeadlineFailsOnlyOnceStopped(t *testing.T) {
	h := newHarness(t)
	hold := make(chan struct{})
	h.rt.mu.Lock()
	h.rt.stopHold = hold
	h.rt.mu.Unlock()
	pod := testPod("u9b", corev1.RestartPolicyAlways, ctr("app", "sleep"))
	pod.Spec.ActiveDeadlineSeconds = ptr.To[int64](30)
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	h.eventually(pod.UID, "running", func(s *corev1.PodStatus) bool { return mainState(s, 0).Running != nil })
	h.step(30 * time.Second)
	require.Eventually(t, func() bool {
		return slices.ContainsFunc(h.rt.calls(), func(c string) bool { return strings.HasPrefix(c, "stop app#0") })
	}, 10*time.Second, 10*time.Millisecond, "the deadline stops the container")
	assert.NotEqual(t, corev1.PodFailed, h.status(pod.UID).Phase, "Failed while its container is still stopping")
	close(hold)
	h.eventually(pod.UID, "DeadlineExceeded", func(s *corev1.PodStatus) bool {
		return s.Phase == corev1.PodFailed && s.Reason == "DeadlineExceeded" && mainState(s, 0).Terminated != nil
	})
}

func TestFailingLivenessProbeRestartsTheContainer(t *testing.T) {
	h := newHarness(t)
	h.rt.execExit = map[string]int{"check": 1}
	c := ctr("app", "serve")
	c.LivenessProbe = &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"check"}}},
		PeriodSeconds: 5, FailureThreshold: 2,
	}
	pod := testPod("u10", corev1.RestartPolicyAlways, c)
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	h.eventually(pod.UID, "running", func(s *corev1.PodStatus) bool { return mainState(s, 0).Running != nil })
	require.Eventually(t, func() bool {
		h.clock.Step(5 * time.Second) // a probe period per poll
		s := h.status(pod.UID)
		return s.ContainerStatuses[0].RestartCount >= 1 && mainState(s, 0).Running != nil
	}, 10*time.Second, 20*time.Millisecond, "restarted after two failed probes")
	last := h.status(pod.UID).ContainerStatuses[0].LastTerminationState.Terminated
	require.NotNil(t, last)
	assert.Equal(t, int32(143), last.ExitCode, "stopped with its stop signal")
	assert.Contains(t, h.rt.calls(), "stop app#0 grace=12s")
}

func TestReadinessProbeGatesReady(t *testing.T) {
	h := newHarness(t)
	h.rt.execExit = map[string]int{"ready?": 1}
	c := ctr("app", "serve")
	c.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"ready?"}}}, PeriodSeconds: 1}
	pod := testPod("u11", corev1.RestartPolicyAlways, c)
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	h.eventually(pod.UID, "running, not ready", func(s *corev1.PodStatus) bool {
		return mainState(s, 0).Running != nil && !s.ContainerStatuses[0].Ready
	})
	h.rt.mu.Lock()
	h.rt.execExit = nil
	h.rt.mu.Unlock()
	require.Eventually(t, func() bool {
		h.clock.Step(time.Second)
		s := h.status(pod.UID)
		return s.ContainerStatuses[0].Ready && hasTrue(s, corev1.PodReady)
	}, 10*time.Second, 20*time.Millisecond)
}

func hasTrue(s *corev1.PodStatus, typ corev1.PodConditionType) bool {
	for _, c := range s.Conditions {
		if c.Type == typ {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func TestAPIPodImageChangeRestartsThatContainer(t *testing.T) {
	h := newHarness(t)
	pod := testPod("u12", corev1.RestartPolicyNever, ctr("app", "serve"), ctr("other", "serve"))
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	h.eventually(pod.UID, "running", func(s *corev1.PodStatus) bool { return mainState(s, 1).Running != nil })
	updated := pod.DeepCopy()
	updated.Spec.Containers[0].Image = "busybox:2"
	require.NoError(t, h.p.UpdatePod(context.Background(), updated))
	h.eventually(pod.UID, "restarted with the new image", func(s *corev1.PodStatus) bool {
		cs := s.ContainerStatuses[0]
		return cs.RestartCount == 1 && cs.State.Running != nil && cs.Image == "busybox:2"
	})
	assert.Equal(t, int32(0), h.status(pod.UID).ContainerStatuses[1].RestartCount, "the other container is untouched")
}

func TestStopPodsOnExitStopsEveryContainerAndSandbox(t *testing.T) {
	h := &harness{t: t, clock: clocktesting.NewFakeClock(time.Now()), root: t.TempDir(), events: record.NewFakeRecorder(100)}
	h.rt = newFakeRuntime(h.clock)
	p, err := New(context.Background(), Config{Runtime: h.rt, RuntimeName: "fake", RootDir: h.root, Clock: h.clock, StopPodsOnExit: true})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); assert.NoError(t, p.Run(ctx)) }()
	require.NoError(t, p.CreatePod(context.Background(), testPod("u13", corev1.RestartPolicyAlways, ctr("a", "x"), ctr("b", "x"))))
	require.Eventually(t, func() bool { return h.rt.running("a") != "" && h.rt.running("b") != "" }, 5*time.Second, 5*time.Millisecond)
	cancel()
	<-done
	assert.Empty(t, h.rt.running("a"))
	assert.Empty(t, h.rt.running("b"))
	h.rt.mu.Lock()
	require.Len(t, h.rt.sandboxes, 1)
	for id, sb := range h.rt.sandboxes {
		assert.Equal(t, SandboxNotReady, sb.State, "sandbox %s stopped too: nothing of the pod outlives the agent", id)
	}
	h.rt.mu.Unlock()
	pods, err := p.GetPods(context.Background())
	require.NoError(t, err)
	assert.Len(t, pods, 1, "the pod stays known for the next agent")
}

// An agent that stopped its pods as it exited (or a reboot, which ends the sandboxes' holders)
// leaves a pod's sandbox not ready: the next agent runs the pod in a new sandbox and its
// containers go on counting their restarts from the exited instances of the old one, as the
// kubelet after a reboot, instead of starting over at 0 (and overwriting 0.log).
func TestPodRunsAgainInANewSandboxWithItsRestartCount(t *testing.T) {
	h := newHarness(t)
	h.stop()
	h.configure = func(c *Config) { c.StopPodsOnExit = true }
	h.start()
	pod := testPod("rb1", corev1.RestartPolicyAlways, ctr("main", "sleep", "1000"))
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	h.eventually(pod.UID, "Running", func(s *corev1.PodStatus) bool { return s.Phase == corev1.PodRunning })
	first := h.status(pod.UID).ContainerStatuses[0].ContainerID

	h.stop() // every container and the sandbox stopped
	h.start()
	h.eventually(pod.UID, "running again, restarted once", func(s *corev1.PodStatus) bool {
		cs := s.ContainerStatuses[0]
		return cs.State.Running != nil && cs.RestartCount == 1 && cs.ContainerID != first
	})
	cs := h.status(pod.UID).ContainerStatuses[0]
	require.NotNil(t, cs.LastTerminationState.Terminated, "the last state is the old sandbox's instance")
	assert.Equal(t, first, cs.LastTerminationState.Terminated.ContainerID)
	h.rt.mu.Lock()
	defer h.rt.mu.Unlock()
	ready := 0
	for _, sb := range h.rt.sandboxes {
		if sb.State == SandboxReady {
			ready++
		}
	}
	assert.Equal(t, 1, ready, "one ready sandbox: the new one (sandboxes: %d)", len(h.rt.sandboxes))
}

func TestPodIPIsTheSandboxesOnThePodNetwork(t *testing.T) {
	h := newHarness(t)
	h.rt.mu.Lock()
	h.rt.podIP = "10.88.0.7"
	h.rt.mu.Unlock()
	own := testPod("ip1", corev1.RestartPolicyAlways, ctr("main", "sleep", "1000"))
	host := testPod("ip2", corev1.RestartPolicyAlways, ctr("main", "sleep", "1000"))
	host.Spec.HostNetwork = true
	for _, pod := range []*corev1.Pod{own, host} {
		require.NoError(t, h.p.CreatePod(context.Background(), pod))
		h.eventually(pod.UID, "Running", func(s *corev1.PodStatus) bool { return s.Phase == corev1.PodRunning })
	}
	assert.Equal(t, "10.88.0.7", h.status(own.UID).PodIP)
	assert.Equal(t, "127.0.0.1", h.status(host.UID).PodIP, "a host-network pod has the node's address")

	h.stop()
	h.start() // a restarted agent takes the address from the listed sandbox
	h.eventually(own.UID, "re-adopted with its address", func(s *corev1.PodStatus) bool { return s.PodIP == "10.88.0.7" })
}
