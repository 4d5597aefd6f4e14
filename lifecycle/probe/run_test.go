package probe

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

func TestWithDefaults(t *testing.T) {
	got := withDefaults(&corev1.Probe{})
	assert.Equal(t, []int32{1, 10, 1, 3}, []int32{got.TimeoutSeconds, got.PeriodSeconds, got.SuccessThreshold, got.FailureThreshold})
	set := &corev1.Probe{TimeoutSeconds: 5, PeriodSeconds: 2, SuccessThreshold: 4, FailureThreshold: 6, InitialDelaySeconds: 7}
	assert.Equal(t, set, withDefaults(set))
	assert.NotSame(t, set, withDefaults(set), "the caller's probe is not changed")
}

func TestRunUnsupported(t *testing.T) {
	got, _, err := Run(t.Context(), &corev1.Probe{}, Target{})
	require.ErrorIs(t, err, ErrNoHandler)
	assert.Equal(t, Unknown, got)
}

func TestRunNilProbe(t *testing.T) {
	got, _, err := Run(t.Context(), nil, Target{})
	require.ErrorIs(t, err, ErrNoHandler)
	assert.Equal(t, Unknown, got)
}

func TestNames(t *testing.T) {
	assert.Equal(t, []string{"Unknown", "Success", "Failure"}, []string{Unknown.String(), Success.String(), Failure.String()})
	assert.Equal(t, []string{"Liveness", "Readiness", "Startup"}, []string{Liveness.String(), Readiness.String(), Startup.String()})
	// The kubelet's probe.Result spelling, in "probe errored and resulted in %s state".
	assert.Equal(t, []string{"unknown", "success", "warning", "failure"},
		[]string{outcomeUnknown.String(), outcomeSuccess.String(), outcomeWarning.String(), outcomeFailure.String()})
}
