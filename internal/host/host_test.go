package host

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestCapacityIsTheMachines(t *testing.T) {
	c, err := Capacity(t.TempDir(), 110)
	require.NoError(t, err)
	assert.Positive(t, c.Cpu().Value())
	assert.Greater(t, c.Memory().Value(), int64(64<<20))
	assert.Positive(t, c.StorageEphemeral().Value())
	assert.Equal(t, int64(110), c.Pods().Value())
}

func TestAllocatableSubtractsReservationsAndStopsAtZero(t *testing.T) {
	capacity := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("1Gi")}
	system := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("2Gi")}
	kube := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}
	a := Allocatable(capacity, system, kube)
	assert.Equal(t, "1250m", a.Cpu().String())
	assert.True(t, a.Memory().IsZero(), "never below zero: %s", a.Memory())
	assert.Equal(t, "2", capacity.Cpu().String(), "capacity untouched")
}

func TestNodeStatsReportARateFromTheSecondCall(t *testing.T) {
	s := &Stats{NodeName: "n1", RootDir: t.TempDir()}
	first, err := s.Node()
	require.NoError(t, err)
	assert.Nil(t, first.CPU.UsageNanoCores, "no rate from one sample")
	assert.Positive(t, *first.CPU.UsageCoreNanoSeconds)
	assert.Positive(t, *first.Memory.WorkingSetBytes)
	require.NotNil(t, first.Fs)
	for i := 0; i < 1e6; i++ { // some CPU time between the samples
		_ = i * i
	}
	second, err := s.Node()
	require.NoError(t, err)
	assert.NotNil(t, second.CPU.UsageNanoCores)
}
