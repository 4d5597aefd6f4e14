package process

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vk-static/vk-static/lifecycle"
	"github.com/vk-static/vk-static/runtime/process/internal/cgroup"
)

// cgroupLimits are the memory limit and CPU quota the kernel holds for the cgroup paths, as
// the files say them (v1: bytes and microseconds per period; v2: memory.max, cpu.max's quota).
func cgroupLimits(t *testing.T, paths cgroup.Paths) (memory, cpuQuota string) {
	t.Helper()
	read := func(dir, name string) string {
		data, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		return strings.TrimSpace(string(data))
	}
	if dir, ok := paths[""]; ok {
		return read(dir, "memory.max"), strings.Fields(read(dir, "cpu.max"))[0]
	}
	return read(paths["memory"], "memory.limit_in_bytes"), read(paths["cpu"], "cpu.cfs_quota_us")
}

// An in-place resize changes the limits the kernel enforces on a running container and on its
// pod, up and then down, and the container runs on: the same process, never restarted.
func TestCgroupResizeChangesTheLimitsOfARunningContainer(t *testing.T) {
	r, _ := cgroupRuntime(t, 0)
	ctx := context.Background()
	sandboxID, id, pod := runInPod(t, r, limits("200m", "100Mi"), `sleep 1000`)
	rec, err := r.loadContainer(id)
	require.NoError(t, err)
	sb, err := r.loadSandbox(sandboxID)
	require.NoError(t, err)
	before, err := r.ContainerStatus(ctx, id)
	require.NoError(t, err)
	require.Equal(t, lifecycle.ContainerRunning, before.State)
	mem, quota := cgroupLimits(t, rec.Cgroups)
	assert.Equal(t, []string{"104857600", "20000"}, []string{mem, quota}, "created with its limits")

	for _, step := range []struct {
		cpu, memory    string
		bytes, quotaUs string
	}{
		{"300m", "200Mi", "209715200", "30000"},
		{"100m", "50Mi", "52428800", "10000"},
	} {
		resized := pod.DeepCopy()
		resized.Spec.Containers[0].Resources = limits(step.cpu, step.memory)
		require.NoError(t, r.UpdateContainerResources(ctx, id, resized, &resized.Spec.Containers[0]), "to %s/%s", step.cpu, step.memory)
		mem, quota := cgroupLimits(t, rec.Cgroups)
		assert.Equal(t, []string{step.bytes, step.quotaUs}, []string{mem, quota}, "the container's cgroup at %s/%s", step.cpu, step.memory)
		mem, quota = cgroupLimits(t, sb.Cgroups)
		assert.Equal(t, []string{step.bytes, step.quotaUs}, []string{mem, quota}, "the pod's cgroup at %s/%s", step.cpu, step.memory)
	}
	after, err := r.ContainerStatus(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, lifecycle.ContainerRunning, after.State)
	assert.Equal(t, before.StartedAt, after.StartedAt, "the same instance runs on")
}
