package host

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
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

// On cgroup v2 the node's CPU, memory and IO carry the machine's pressure stall information
// (/proc/pressure), as the kubelet's root cgroup stats do; total is the file's value. On v1,
// where the pods have none, neither does the node, though the kernel may have /proc/pressure.
// A file missing or malformed leaves its resource out, and Node still answers.
func TestNodeStatsPressureOnCgroupV2Only(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
	}
	write("cpu", "some avg10=2.50 avg60=1.00 avg300=0.50 total=9000\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")
	write("memory", "some avg10=0.00 avg60=0.00 avg300=0.00 total=300\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=100\n")
	write("io", "some avg10=0.10 avg60=0.00 avg300=0.00 total=70\nfull avg10=0.05 avg60=0.00 avg300=0.00 total=40\n")
	v2 := true
	s := &Stats{NodeName: "n1", RootDir: t.TempDir(), pressureDir: dir, cgroupV2: func() bool { return v2 }}

	ns, err := s.Node()
	require.NoError(t, err)
	assert.Equal(t, &statsv1alpha1.PSIStats{Some: statsv1alpha1.PSIData{Total: 9000, Avg10: 2.5, Avg60: 1, Avg300: 0.5}}, ns.CPU.PSI)
	assert.Equal(t, &statsv1alpha1.PSIStats{Some: statsv1alpha1.PSIData{Total: 300}, Full: statsv1alpha1.PSIData{Total: 100}}, ns.Memory.PSI)
	require.NotNil(t, ns.IO)
	assert.Equal(t, ns.CPU.Time, ns.IO.Time)
	assert.Equal(t, &statsv1alpha1.PSIStats{Some: statsv1alpha1.PSIData{Total: 70, Avg10: 0.1}, Full: statsv1alpha1.PSIData{Total: 40, Avg10: 0.05}}, ns.IO.PSI)

	write("io", "some avg10=0.10 total=70\n")
	require.NoError(t, os.Remove(filepath.Join(dir, "memory")))
	ns, err = s.Node()
	require.NoError(t, err, "a malformed pressure file is no reason to report nothing")
	assert.NotNil(t, ns.CPU.PSI)
	assert.Nil(t, ns.Memory.PSI)
	assert.Nil(t, ns.IO, "no IO stats without its pressure")

	v2 = false
	ns, err = s.Node()
	require.NoError(t, err)
	assert.Nil(t, ns.CPU.PSI, "cgroup v1: no PSI")
	assert.Nil(t, ns.Memory.PSI)
	assert.Nil(t, ns.IO)
	data, err := json.Marshal(ns)
	require.NoError(t, err)
	assert.NotContains(t, string(data), "psi")
}

// This host, as it is: PSI exactly when it is on cgroup v2 and its kernel has /proc/pressure.
func TestNodeStatsPressureOfThisHost(t *testing.T) {
	ns, err := (&Stats{NodeName: "n1", RootDir: t.TempDir()}).Node()
	require.NoError(t, err)
	_, statErr := os.Stat("/proc/pressure/cpu")
	if !unifiedCgroup() || statErr != nil {
		assert.Nil(t, ns.CPU.PSI, "cgroup v1 or no PSI in the kernel")
		assert.Nil(t, ns.IO)
		return
	}
	if ns.CPU.PSI == nil {
		t.Skip("PSI is off on this kernel (psi=0)")
	}
	assert.NotNil(t, ns.Memory.PSI)
	assert.NotNil(t, ns.IO)
}
