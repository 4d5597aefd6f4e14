package lifecycle

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// A sidecar with a startup probe holds up the main containers until that probe passes, as the
// kubelet's computeInitContainerActions; its readiness probe runs as soon as it has, so the pod
// is ready without waiting the readiness probe's period (the upstream "Probing restartable init
// container should be ready immediately after startupProbe succeeds").
func TestSidecarStartupProbeHoldsUpMainThenReadyAtOnce(t *testing.T) {
	h := newHarness(t)
	h.clock.Step(time.Minute) // past the probe workers' start-up jitter
	h.rt.mu.Lock()
	h.rt.execExit = map[string]int{"started?": 1}
	h.rt.mu.Unlock()

	sidecar := ctr("proxy", "serve")
	sidecar.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
	sidecar.StartupProbe = &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"started?"}}},
		PeriodSeconds: 5, FailureThreshold: 120,
	}
	sidecar.ReadinessProbe = &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"ready?"}}},
		PeriodSeconds: 30,
	}
	pod := testPod("u-sidecar-startup", corev1.RestartPolicyAlways, ctr("main", "serve"))
	pod.Spec.InitContainers = []corev1.Container{sidecar}
	require.NoError(t, h.p.CreatePod(context.Background(), pod))

	// The sidecar runs, not started: its startup probe fails, twice, a period apart. The sync
	// that its start event asked for has long run by the second attempt.
	h.eventually(pod.UID, "the sidecar running, not started", func(s *corev1.PodStatus) bool {
		return len(s.InitContainerStatuses) == 1 && s.InitContainerStatuses[0].State.Running != nil &&
			!*s.InitContainerStatuses[0].Started
	})
	h.waitEvent("Startup probe failed")
	h.step(5 * time.Second)
	h.waitEvent("Startup probe failed")
	assert.NotContains(t, h.rt.calls(), "start main#0", "main waits for the sidecar's startup probe")
	s := h.status(pod.UID)
	assert.Nil(t, mainState(s, 0).Running, "main not running while the sidecar has not started")
	assert.False(t, hasTrue(s, corev1.PodInitialized))

	// The startup probe passes at its next period: main starts, and the sidecar's readiness
	// probe runs at once — the clock does not move the readiness probe's 30 s.
	h.rt.mu.Lock()
	h.rt.execExit = nil
	h.rt.mu.Unlock()
	h.clock.Step(5 * time.Second)
	h.eventually(pod.UID, "main running and the pod ready", func(s *corev1.PodStatus) bool {
		return mainState(s, 0).Running != nil && s.InitContainerStatuses[0].Ready && hasTrue(s, corev1.PodReady)
	})
}
