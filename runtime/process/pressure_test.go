package process

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/lifecycle"
	"github.com/vk-static/vk-static/test/support/cgrouptest"
)

// busyLoops keeps three processes runnable: on a machine of two CPUs (the cgroup v2 VM's) one
// of them waits for a CPU whenever they run, and under busyCPU's quota all of them wait while
// the cgroup is throttled, which the kernel counts as the cgroup's CPU pressure; the quota
// leaves the rest of the (emulated) machine to the test.
const (
	busyLoops = `i=0; while [ $i -lt 3 ]; do (while :; do :; done) & i=$((i+1)); done; wait`
	busyCPU   = "300m"
)

// someTotal reads the "some" line's total (microseconds) of a pressure file, apart from the
// runtime's parser.
func someTotal(t *testing.T, file string) uint64 {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	var avg10, avg60, avg300 float64
	var total uint64
	_, err = fmt.Sscanf(string(data), "some avg10=%f avg60=%f avg300=%f total=%d", &avg10, &avg60, &avg300, &total)
	require.NoError(t, err, "%s: %q", file, data)
	return total
}

// requirePSIKernel skips a test on a kernel without pressure stall information (before 4.20,
// or built without it): a fact of the kernel, not of the runtime.
func requirePSIKernel(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/proc/pressure/cpu"); err != nil {
		t.Skipf("this kernel has no pressure stall information: %v", err)
	}
}

// On cgroup v2 a container's stats carry its cgroup's pressure stall information (cpu,
// memory, io), and the sandbox's its pod cgroup's, as the kubelet reports them: read from the
// cgroups' own files — a busy container's CPU pressure total lies between two readings of its
// cpu.pressure taken around the stats, in the file's microseconds, unconverted, as the
// kubelet's — and the pod's likewise from the pod cgroup's files (its own figures: the kernel
// aggregates each cgroup's stalls apart, so they are not its containers' sum). On cgroup v1
// there is none, and the fields are nil (not the zeros the kubelet's cAdvisor fills in, which
// say nothing); the test then skips, PSI being a v2 feature.
func TestCgroupPressureStallInformation(t *testing.T) {
	r, _ := cgroupRuntime(t, 0)
	ctx := context.Background()
	sandboxID, id, _ := runInPod(t, r, limits(busyCPU, ""), busyLoops)
	if r.CgroupVersion() != 2 {
		st, err := r.ContainerStats(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, lifecycle.PSI{}, st.PSI, "no PSI on cgroup v1")
		sb, err := r.SandboxStats(ctx, sandboxID)
		require.NoError(t, err)
		assert.Equal(t, lifecycle.PSI{}, sb.PSI, "no PSI on cgroup v1")
		t.Skip("PSI is a cgroup v2 feature: on this cgroup v1 host the stats have none (checked)")
	}
	requirePSIKernel(t)
	rec, err := r.loadContainer(id)
	require.NoError(t, err)
	sb, err := r.loadSandbox(sandboxID)
	require.NoError(t, err)
	cpuFile := filepath.Join(rec.Cgroups[""], "cpu.pressure")

	var st *lifecycle.ContainerStats
	start := time.Now()
	require.Eventually(t, func() bool {
		st, err = r.ContainerStats(ctx, id)
		return err == nil && st.PSI.CPU != nil && st.PSI.CPU.Some.Total > 0
	}, 3*waitFor, 50*time.Millisecond, "three busy loops under a quota stall on the CPU: %v", err)
	t.Logf("CPU pressure after %s: %+v", time.Since(start).Round(time.Millisecond), *st.PSI.CPU)
	before := someTotal(t, cpuFile)
	st, err = r.ContainerStats(ctx, id)
	require.NoError(t, err)
	after := someTotal(t, cpuFile)
	require.NotNil(t, st.PSI.CPU)
	assert.GreaterOrEqual(t, st.PSI.CPU.Some.Total, before, "the cgroup's own file, in its microseconds")
	assert.LessOrEqual(t, st.PSI.CPU.Some.Total, after, "the cgroup's own file, in its microseconds")
	assert.GreaterOrEqual(t, st.PSI.CPU.Some.Avg10, 0.0)
	assert.NotNil(t, st.PSI.Memory, "memory.pressure")
	assert.NotNil(t, st.PSI.IO, "io.pressure")

	podFile := filepath.Join(sb.Cgroups[""], "cpu.pressure")
	before = someTotal(t, podFile)
	pod, err := r.SandboxStats(ctx, sandboxID)
	require.NoError(t, err)
	after = someTotal(t, podFile)
	require.NotNil(t, pod.PSI.CPU, "the pod cgroup's cpu.pressure")
	assert.Positive(t, pod.PSI.CPU.Some.Total, "the container's stalls are the pod's")
	assert.GreaterOrEqual(t, pod.PSI.CPU.Some.Total, before, "the pod cgroup's own file")
	assert.LessOrEqual(t, pod.PSI.CPU.Some.Total, after, "the pod cgroup's own file")
	assert.NotNil(t, pod.PSI.Memory, "the pod cgroup's memory.pressure")
	assert.NotNil(t, pod.PSI.IO, "the pod cgroup's io.pressure")
}

// The Summary API's JSON for a pod run through the lifecycle on the process runtime carries
// "psi" in the pod's and its container's cpu, memory and io on cgroup v2, as the kubelet's;
// on v1 none, and no io (the test then skips, PSI being a v2 feature).
func TestCgroupPressureInTheSummary(t *testing.T) {
	root := cgrouptest.Root(t)
	r, err := New(Config{StateDir: t.TempDir(), AllowHostNetwork: true, Cgroups: &Cgroups{Root: root, PerQOS: true}})
	require.NoError(t, err)
	require.NoError(t, r.CgroupsUnavailable())
	v2 := r.CgroupVersion() == 2
	p := runLifecycle(t, r)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "pressed", Namespace: "ns", UID: "uid-pressed"},
		// A shell busy in wait ignores SIGTERM: a second's grace, so that the test's end stops it
		// soon.
		Spec: corev1.PodSpec{HostNetwork: true, TerminationGracePeriodSeconds: ptr.To[int64](1), Containers: []corev1.Container{
			{Name: "busy", Image: "busybox", Command: []string{"sh", "-c", busyLoops}, Env: []corev1.EnvVar{{Name: "PATH", Value: testPath[len("PATH="):]}},
				Resources: limits(busyCPU, "")},
		}},
	}
	require.NoError(t, p.CreatePod(context.Background(), pod))
	require.Eventually(t, func() bool { return phase(t, p, pod) == corev1.PodRunning }, 3*waitFor, tick)

	type withPSI struct {
		PSI json.RawMessage `json:"psi"`
	}
	type measured struct {
		CPU    *withPSI `json:"cpu"`
		Memory *withPSI `json:"memory"`
		IO     *withPSI `json:"io"`
	}
	var got struct {
		Pods []struct {
			measured
			Containers []measured `json:"containers"`
		} `json:"pods"`
	}
	require.Eventually(t, func() bool {
		summary, err := p.GetStatsSummary(context.Background())
		if err != nil || len(summary.Pods) != 1 || len(summary.Pods[0].Containers) != 1 {
			return false
		}
		data, err := json.Marshal(summary)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(data, &got))
		return true
	}, 3*waitFor, tick, "the running pod's stats")
	if v2 {
		requirePSIKernel(t)
	}
	for what, m := range map[string]measured{"pod": got.Pods[0].measured, "container": got.Pods[0].Containers[0]} {
		require.NotNil(t, m.CPU, what)
		require.NotNil(t, m.Memory, what)
		if !v2 {
			assert.Nil(t, m.CPU.PSI, "%s: no psi on cgroup v1", what)
			assert.Nil(t, m.Memory.PSI, "%s: no psi on cgroup v1", what)
			assert.Nil(t, m.IO, "%s: no io on cgroup v1", what)
			continue
		}
		for resource, s := range map[string]*withPSI{"cpu": m.CPU, "memory": m.Memory, "io": m.IO} {
			if assert.NotNil(t, s, "%s %s", what, resource) {
				var psi struct {
					Some, Full *struct{ Total *uint64 }
				}
				if assert.NoError(t, json.Unmarshal(s.PSI, &psi), "%s %s: %s", what, resource, s.PSI) {
					assert.NotNil(t, psi.Some, "%s %s.psi.some", what, resource)
					assert.NotNil(t, psi.Full, "%s %s.psi.full", what, resource)
				}
			}
		}
	}
	if !v2 {
		t.Skip("PSI is a cgroup v2 feature: on this cgroup v1 host the Summary has none (checked)")
	}
}
