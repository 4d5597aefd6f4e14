package lifecycle

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/vk-static/vk-static/provider"
)

func ephemeral(name, target string, argv ...string) corev1.EphemeralContainer {
	return corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: name, Image: "busybox", Command: argv},
		TargetContainerName: target}
}

func count(calls []string, call string) int {
	n := 0
	for _, c := range calls {
		if c == call {
			n++
		}
	}
	return n
}

// The upstream "Ephemeral Containers [NodeConformance]" specs: an ephemeral container added to
// a running pod starts in its sandbox, beside the target's process namespace, is reported in
// ephemeralContainerStatuses, is never restarted, and stops with the pod.
func TestEphemeralContainerStartsInTheRunningPodAndIsNeverRestarted(t *testing.T) {
	h := newHarness(t)
	pod := testPod("e1", corev1.RestartPolicyAlways, ctr("app", "serve"))
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	h.eventually(pod.UID, "running", func(s *corev1.PodStatus) bool { return mainState(s, 0).Running != nil })
	appID := h.rt.running("app")
	assert.Empty(t, h.status(pod.UID).EphemeralContainerStatuses)

	updated := pod.DeepCopy()
	updated.Spec.EphemeralContainers = []corev1.EphemeralContainer{ephemeral("debugger", "app", "sleep")}
	require.NoError(t, h.p.UpdatePod(context.Background(), updated))
	h.eventually(pod.UID, "the ephemeral container running", func(s *corev1.PodStatus) bool {
		return len(s.EphemeralContainerStatuses) == 1 && s.EphemeralContainerStatuses[0].State.Running != nil
	})
	s := h.status(pod.UID)
	ecs := s.EphemeralContainerStatuses[0]
	assert.Equal(t, "debugger", ecs.Name)
	assert.False(t, ecs.Ready, "an ephemeral container is never ready")
	assert.Equal(t, corev1.PodRunning, s.Phase)
	assert.True(t, hasTrue(s, corev1.PodReady), "the pod stays ready")
	assert.Equal(t, appID, h.rt.running("app"), "the pod's containers are untouched")
	cfg := h.rt.config("debugger")
	require.NotNil(t, cfg)
	assert.Equal(t, appID, cfg.TargetContainerID, "joins the target's process namespace")
	h.rt.mu.Lock()
	sandboxes := map[string]bool{}
	for _, c := range h.rt.containers {
		sandboxes[c.status.SandboxID] = true
	}
	h.rt.mu.Unlock()
	assert.Len(t, sandboxes, 1, "in the pod's existing sandbox")

	// Exec, attach and logs find it by name.
	debuggerID := h.rt.running("debugger")
	require.NoError(t, h.p.RunInContainer(context.Background(), pod.Namespace, pod.Name, "debugger", []string{"true"}, provider.AttachIO(nil)))

	h.rt.exit(debuggerID, 0)
	h.eventually(pod.UID, "the ephemeral container terminated", func(s *corev1.PodStatus) bool {
		t := s.EphemeralContainerStatuses[0].State.Terminated
		return t != nil && t.ExitCode == 0 && t.Reason == reasonCompleted
	})
	// Another sync (the main container restarts) does not start it again, whatever the
	// pod's restart policy.
	h.rt.exit(appID, 1)
	h.eventually(pod.UID, "app restarted", func(s *corev1.PodStatus) bool {
		return s.ContainerStatuses[0].RestartCount == 1 && mainState(s, 0).Running != nil
	})
	h.clock.Step(time.Hour)
	require.NoError(t, h.p.UpdatePod(context.Background(), updated))
	h.eventually(pod.UID, "still terminated", func(s *corev1.PodStatus) bool {
		return s.EphemeralContainerStatuses[0].State.Terminated != nil && s.EphemeralContainerStatuses[0].RestartCount == 0
	})
	assert.Equal(t, 1, count(h.rt.calls(), "start debugger#0"))
	assert.Zero(t, count(h.rt.calls(), "start debugger#1"), "never restarted")

	// Updating the ephemeral containers: a second one starts beside, and stops with the pod.
	second := updated.DeepCopy()
	second.Spec.EphemeralContainers = append(second.Spec.EphemeralContainers, ephemeral("shell", "", "sleep"))
	require.NoError(t, h.p.UpdatePod(context.Background(), second))
	h.eventually(pod.UID, "the second ephemeral container running", func(s *corev1.PodStatus) bool {
		return len(s.EphemeralContainerStatuses) == 2 && s.EphemeralContainerStatuses[1].State.Running != nil
	})
	assert.Empty(t, h.rt.config("shell").TargetContainerID, "no target: its own process namespace")
	require.NoError(t, h.p.DeletePod(context.Background(), second))
	require.Eventually(t, func() bool {
		_, err := h.p.GetPod(context.Background(), pod.Namespace, pod.Name)
		return provider.IsNotFound(err)
	}, 5*time.Second, 5*time.Millisecond, "forgotten once stopped")
	assert.Equal(t, 1, count(h.rt.calls(), "stop shell#0 grace=12s"), "stopped with the pod")
}

// A target that has no instance yet: the ephemeral container waits with the kubelet's
// configuration error, and starts once the target exists.
func TestEphemeralContainerWaitsForItsTarget(t *testing.T) {
	h := newHarness(t)
	init := ctr("setup", "wait")
	pod := testPod("e2", corev1.RestartPolicyAlways, ctr("app", "serve"))
	pod.Spec.InitContainers = []corev1.Container{init}
	pod.Spec.EphemeralContainers = []corev1.EphemeralContainer{ephemeral("debugger", "app", "sleep"), ephemeral("early", "", "sleep")}
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	h.eventually(pod.UID, "an untargeted one runs during initialization", func(s *corev1.PodStatus) bool {
		return len(s.EphemeralContainerStatuses) == 2 && s.EphemeralContainerStatuses[1].State.Running != nil &&
			s.InitContainerStatuses[0].State.Running != nil
	})
	w := h.status(pod.UID).EphemeralContainerStatuses[0].State.Waiting
	require.NotNil(t, w)
	assert.Equal(t, reasonConfigError, w.Reason)
	assert.Equal(t, "unable to find target container app", w.Message)

	h.rt.exit(h.rt.running("setup"), 0)
	h.eventually(pod.UID, "app running", func(s *corev1.PodStatus) bool { return mainState(s, 0).Running != nil })
	h.step(retryAfter)
	h.eventually(pod.UID, "the targeted one running", func(s *corev1.PodStatus) bool {
		return s.EphemeralContainerStatuses[0].State.Running != nil
	})
	assert.Equal(t, h.rt.running("app"), h.rt.config("debugger").TargetContainerID)
}

// noEphemeralRuntime is a Runtime that does not implement EphemeralRuntime (the process
// backend).
type noEphemeralRuntime struct{ Runtime }

// On a runtime that cannot run them, an ephemeral container waits for good with a message
// naming the field and the provider, and the pod runs on.
func TestEphemeralContainerOnARuntimeWithoutThemWaitsAndThePodRunsOn(t *testing.T) {
	h := &harness{t: t, clock: clocktesting.NewFakeClock(time.Date(2026, 11, 23, 7, 0, 0, 0, time.UTC)), root: t.TempDir(),
		events: record.NewFakeRecorder(1000)}
	h.rt = newFakeRuntime(h.clock)
	h.runtime = noEphemeralRuntime{h.rt}
	h.start()
	pod := testPod("e3", corev1.RestartPolicyAlways, ctr("app", "serve"))
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	h.eventually(pod.UID, "running", func(s *corev1.PodStatus) bool { return mainState(s, 0).Running != nil })
	updated := pod.DeepCopy()
	updated.Spec.EphemeralContainers = []corev1.EphemeralContainer{ephemeral("debugger", "app", "sleep")}
	require.NoError(t, h.p.UpdatePod(context.Background(), updated))
	h.eventually(pod.UID, "refused", func(s *corev1.PodStatus) bool {
		return len(s.EphemeralContainerStatuses) == 1 && s.EphemeralContainerStatuses[0].State.Waiting != nil &&
			s.EphemeralContainerStatuses[0].State.Waiting.Reason == reasonEphemeralNotSupported
	})
	s := h.status(pod.UID)
	assert.Equal(t, "spec.ephemeralContainers[0] (debugger): the fake provider does not run ephemeral containers",
		s.EphemeralContainerStatuses[0].State.Waiting.Message)
	assert.Equal(t, corev1.PodRunning, s.Phase)
	assert.True(t, hasTrue(s, corev1.PodReady))
	assert.True(t, slices.ContainsFunc(h.drainEvents(), func(e string) bool {
		return strings.Contains(e, "spec.ephemeralContainers[0] (debugger)")
	}))
	assert.Equal(t, []string{"start app#0"}, h.rt.calls(), "nothing else started, nothing restarted")
}

// A restarted agent takes up a running ephemeral container as it is, and does not start a
// finished one again.
func TestRestartedAgentKeepsEphemeralContainers(t *testing.T) {
	h := newHarness(t)
	pod := testPod("e4", corev1.RestartPolicyAlways, ctr("app", "serve"))
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	h.eventually(pod.UID, "running", func(s *corev1.PodStatus) bool { return mainState(s, 0).Running != nil })
	updated := pod.DeepCopy()
	updated.Spec.EphemeralContainers = []corev1.EphemeralContainer{ephemeral("done", "", "true"), ephemeral("shell", "app", "sleep")}
	require.NoError(t, h.p.UpdatePod(context.Background(), updated))
	h.eventually(pod.UID, "both running", func(s *corev1.PodStatus) bool {
		return len(s.EphemeralContainerStatuses) == 2 && s.EphemeralContainerStatuses[0].State.Running != nil &&
			s.EphemeralContainerStatuses[1].State.Running != nil
	})
	h.rt.exit(h.rt.running("done"), 0)
	h.eventually(pod.UID, "one finished", func(s *corev1.PodStatus) bool { return s.EphemeralContainerStatuses[0].State.Terminated != nil })
	shellID := h.rt.running("shell")

	h.stop()
	h.start()
	require.NoError(t, h.p.CreatePod(context.Background(), updated), "the controller creating it again is no restart")
	got, err := h.p.GetPodStatus(context.Background(), pod.Namespace, pod.Name)
	require.NoError(t, err)
	require.Len(t, got.EphemeralContainerStatuses, 2)
	assert.NotNil(t, got.EphemeralContainerStatuses[0].State.Terminated, "still finished")
	require.NotNil(t, got.EphemeralContainerStatuses[1].State.Running, "still running")
	assert.Equal(t, "fake://"+shellID, got.EphemeralContainerStatuses[1].ContainerID)
	require.NoError(t, h.p.UpdatePod(context.Background(), updated)) // a sync
	h.eventually(pod.UID, "synced", func(s *corev1.PodStatus) bool { return len(s.EphemeralContainerStatuses) == 2 })
	assert.Equal(t, []string{"start app#0", "start done#0", "start shell#0"}, h.rt.calls(), "nothing started again")
}
