package cgroup

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/vk-static/vk-static/internal/psi"
)

// On v2 Pressure reads the cgroup directory's cpu.pressure, memory.pressure and io.pressure
// (a malformed one left out, with the error; a missing one no PSI); on v1, whose cgroups have
// no such files, there is none, whatever the directories hold. (Read from a real cgroup in
// the process runtime's TestCgroupPressureStallInformation, which runs on v2 in a VM.)
func TestPressure(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cpu.pressure"), []byte("some avg10=3.00 avg60=2.00 avg300=1.00 total=500\nfull avg10=1.00 avg60=0.50 avg300=0.25 total=100\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "memory.pressure"), []byte("some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "io.pressure"), []byte("some total=7\n"), 0o644))

	v2 := &Hierarchy{v2: true}
	r, err := v2.Pressure(Paths{"": dir})
	require.Error(t, err, "the malformed io.pressure")
	assert.Contains(t, err.Error(), "io.pressure")
	assert.Equal(t, &statsv1alpha1.PSIStats{
		Some: statsv1alpha1.PSIData{Total: 500, Avg10: 3, Avg60: 2, Avg300: 1},
		Full: statsv1alpha1.PSIData{Total: 100, Avg10: 1, Avg60: 0.5, Avg300: 0.25},
	}, r.CPU)
	assert.Equal(t, &statsv1alpha1.PSIStats{}, r.Memory)
	assert.Nil(t, r.IO)

	r, err = v2.Pressure(Paths{"": filepath.Join(dir, "removed")})
	require.NoError(t, err)
	assert.Equal(t, psi.Resources{}, r, "a cgroup without pressure files (gone, PSI off): none")

	_, err = v2.Pressure(Paths{"memory": dir})
	require.Error(t, err, "v1 paths on v2")

	v1 := &Hierarchy{}
	r, err = v1.Pressure(Paths{"cpu": dir, "memory": dir})
	require.NoError(t, err)
	assert.Equal(t, psi.Resources{}, r, "cgroup v1: none")
}
