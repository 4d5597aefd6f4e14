package eviction

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The hard memory and nodefs thresholds are reserved from allocatable, a percentage of
// capacity; a soft threshold and the other signals are not.
func TestHardReservation(t *testing.T) {
	thresholds, err := ParseThresholdConfig(
		map[string]string{"memory.available": "100Mi", "nodefs.available": "10%", "imagefs.available": "15%"},
		map[string]string{"memory.available": "500Mi"}, map[string]string{"memory.available": "1m"}, nil)
	require.NoError(t, err)
	got := HardReservation(thresholds, corev1.ResourceList{
		corev1.ResourceMemory:           resource.MustParse("4Gi"),
		corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
	})
	assert.Len(t, got, 2)
	assert.Equal(t, int64(100<<20), got.Memory().Value(), "the hard threshold, not the soft one")
	// 10% as the kubelet takes it: a float32 fraction of the capacity.
	assert.Equal(t, int64(float64(100<<30)*float64(float32(0.1))), got.StorageEphemeral().Value())
}
