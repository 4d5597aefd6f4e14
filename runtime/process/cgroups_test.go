package process

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vk-static/vk-static/lifecycle"
	"github.com/vk-static/vk-static/test/support/cgrouptest"
)

// cgroupRuntime is a runtime with cgroups under a root of the test's own.
func cgroupRuntime(t *testing.T, pidsLimit int64) (*Runtime, string) {
	t.Helper()
	root := cgrouptest.Root(t)
	r := newTestRuntime(t, Config{Cgroups: &Cgroups{Root: root, PerQOS: true, PodPidsLimit: pidsLimit}})
	require.NoError(t, r.CgroupsUnavailable())
	return r, root
}

// runInPod creates a sandbox for a one-container API pod with resources res, changed by each
// of with, and runs script in it.
func runInPod(t *testing.T, r *Runtime, res corev1.ResourceRequirements, script string, with ...func(*corev1.Pod)) (sandboxID, id string, pod *corev1.Pod) {
	t.Helper()
	pod = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: types.UID("uid-" + strconv.FormatInt(time.Now().UnixNano(), 36))},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: res}}}}
	for _, f := range with {
		f(pod)
	}
	sandboxID, err := r.RunSandbox(context.Background(), &lifecycle.SandboxConfig{PodUID: pod.UID, Namespace: "ns", Name: "p", Pod: pod})
	require.NoError(t, err)
	cfg := &lifecycle.ContainerConfig{Name: "c", Command: []string{"sh", "-c", script}, Env: []string{testPath},
		LogPath: filepath.Join(t.TempDir(), "c.log"), Pod: pod, Container: &pod.Spec.Containers[0]}
	id, err = r.CreateContainer(context.Background(), sandboxID, cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		_ = r.StopContainer(ctx, id, 0)
		_ = r.RemoveContainer(ctx, id)
		_ = r.RemoveSandbox(ctx, sandboxID)
	})
	require.NoError(t, r.StartContainer(context.Background(), id))
	return sandboxID, id, pod
}

func limits(cpu, memory string) corev1.ResourceRequirements {
	l := corev1.ResourceList{}
	if cpu != "" {
		l[corev1.ResourceCPU] = resource.MustParse(cpu)
	}
	if memory != "" {
		l[corev1.ResourceMemory] = resource.MustParse(memory)
	}
	return corev1.ResourceRequirements{Limits: l, Requests: l}
}

// A container that allocates past its memory limit is killed by the kernel and reported as the
// kubelet reports it: exit code 137, reason OOMKilled. Its cgroup is gone once it ended.
func TestCgroupMemoryLimitOOMKilled(t *testing.T) {
	r, _ := cgroupRuntime(t, 0)
	_, id, _ := runInPod(t, r, limits("", "48Mi"), `dd if=/dev/zero of=/dev/null bs=200M count=1`)
	rec, err := r.loadContainer(id)
	require.NoError(t, err)
	require.NotEmpty(t, rec.Cgroups)
	s := waitExited(t, r, id)
	assert.Equal(t, int32(137), s.ExitCode)
	require.Eventually(t, func() bool { return status(t, r, id).Reason == ReasonOOMKilled }, waitFor, tick, "reason %q", status(t, r, id).Reason)
	for _, dir := range rec.Cgroups {
		require.Eventually(t, func() bool { _, err := os.Stat(dir); return os.IsNotExist(err) }, waitFor, tick, "the ended container's cgroup %s", dir)
	}
}

// An OOM kill ends a container only when the kernel ended its workload: with a shell whose
// child is killed, on cgroup v2 (memory.oom.group, as the kubelet sets it) the whole container
// goes — exit code 137, reason OOMKilled, the shell never goes on — while on v1, or with
// SingleProcessOOMKill, only the child goes and the shell's end is its own: it goes on and exits
// 0, and no OOMKilled reason is invented for a container that completed.
func TestCgroupOOMKillOfAChild(t *testing.T) {
	for _, single := range []bool{false, true} {
		t.Run(fmt.Sprintf("singleProcessOOMKill=%v", single), func(t *testing.T) {
			root := cgrouptest.Root(t)
			r := newTestRuntime(t, Config{Cgroups: &Cgroups{Root: root, PerQOS: true, SingleProcessOOMKill: single}})
			require.NoError(t, r.CgroupsUnavailable())
			_, id, _ := runInPod(t, r, limits("", "48Mi"), `dd if=/dev/zero of=/dev/null bs=200M count=1; echo survived`)
			rec, err := r.loadContainer(id)
			require.NoError(t, err)
			group := r.CgroupVersion() == 2 && !single
			if r.CgroupVersion() == 2 {
				data, err := os.ReadFile(filepath.Join(rec.Cgroups[""], "memory.oom.group"))
				require.NoError(t, err)
				assert.Equal(t, map[bool]string{true: "1", false: "0"}[group], strings.TrimSpace(string(data)), "memory.oom.group")
			}
			waitExited(t, r, id)
			for _, dir := range rec.Cgroups {
				require.Eventually(t, func() bool { _, err := os.Stat(dir); return os.IsNotExist(err) }, waitFor, tick, "the ended container's cgroup %s, removed once concluded", dir)
			}
			s := status(t, r, id)
			out := logContents(t, rec.Config.LogPath, "stdout")
			if group {
				assert.Equal(t, int32(137), s.ExitCode)
				assert.Equal(t, ReasonOOMKilled, s.Reason)
				assert.Empty(t, out, "the shell was killed with its child")
			} else {
				assert.Equal(t, int32(0), s.ExitCode)
				assert.Empty(t, s.Reason, "a container that completed")
				assert.Equal(t, []string{"survived"}, out)
			}
		})
	}
}

// The agent leaves no cgroup behind for a pod nothing runs in: when the runtime closes (the
// agent stops, with --stop-pods-on-exit after every container stopped) the pod's cgroup goes,
// while a pod whose container runs on keeps its own. The pod's next container makes it again,
// with the pod's limits.
func TestCgroupIdlePodRemovedAtClose(t *testing.T) {
	r, _ := cgroupRuntime(t, 0)
	sandboxID, id, pod := runInPod(t, r, limits("", "64Mi"), `exit 0`)
	_, busyID, busy := runInPod(t, r, limits("", ""), `exec sleep 1000`)
	waitExited(t, r, id)
	rec, err := r.loadContainer(id)
	require.NoError(t, err)
	for _, dir := range rec.Cgroups {
		require.Eventually(t, func() bool { _, err := os.Stat(dir); return os.IsNotExist(err) }, waitFor, tick, "the ended container's cgroup %s", dir)
	}
	require.True(t, cgrouptest.Exists(r.cgroups.PodPath(pod)))

	require.NoError(t, r.Close())
	assert.False(t, cgrouptest.Exists(r.cgroups.PodPath(pod)), "the idle pod's cgroup is gone")
	assert.True(t, cgrouptest.Exists(r.cgroups.PodPath(busy)), "the busy pod's cgroup stays")

	r2 := newTestRuntime(t, Config{StateDir: r.cfg.StateDir, Cgroups: r.cfg.Cgroups})
	cfg := &lifecycle.ContainerConfig{Name: "c2", Command: []string{"sh", "-c", "exec sleep 1000"}, Env: []string{testPath},
		LogPath: filepath.Join(t.TempDir(), "c2.log"), Pod: pod, Container: &pod.Spec.Containers[0]}
	id2, err := r2.CreateContainer(context.Background(), sandboxID, cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		// r is closed: r2, which took up the busy container, stops it.
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		_ = r2.StopContainer(ctx, busyID, 0)
		_ = r2.RemoveContainer(ctx, id2)
	})
	sb, err := r2.loadSandbox(sandboxID)
	require.NoError(t, err)
	limit := map[int]string{1: "memory.limit_in_bytes", 2: "memory.max"}[r2.CgroupVersion()]
	dir := sb.Cgroups[""]
	if dir == "" {
		dir = sb.Cgroups["memory"]
	}
	data, err := os.ReadFile(filepath.Join(dir, limit))
	require.NoError(t, err, "the pod's cgroup, made again")
	assert.Equal(t, strconv.Itoa(64<<20), strings.TrimSpace(string(data)), "with the pod's limit")
}

// A CPU limit is a CFS quota: a busy loop under 100m is throttled, as the cgroup's stats show.
func TestCgroupCPUQuotaThrottles(t *testing.T) {
	r, _ := cgroupRuntime(t, 0)
	_, id, _ := runInPod(t, r, limits("100m", ""), `while :; do :; done`)
	rec, err := r.loadContainer(id)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		u, err := r.cgroups.Stats(rec.Cgroups)
		return err == nil && u.ThrottledPeriods > 0
	}, waitFor, 50*time.Millisecond, "the quota throttles the loop")
	data, err := os.ReadFile(filepath.Join(rec.Cgroups["cpu"], "cpu.cfs_quota_us"))
	if err == nil { // v1
		assert.Equal(t, "10000", strings.TrimSpace(string(data)))
	}
	st, err := r.ContainerStats(context.Background(), id)
	require.NoError(t, err)
	assert.Positive(t, st.CPUUsageCoreNanoSeconds)
}

// --pod-pids-limit holds a fork bomb to the pod's cgroup: the forks past the limit fail, the
// node and the runtime go on, and stopping the container ends every process.
func TestCgroupPidsLimitStopsForkBomb(t *testing.T) {
	r, _ := cgroupRuntime(t, 16)
	_, id, _ := runInPod(t, r, limits("", ""), `(i=0; while [ $i -lt 200 ]; do sleep 600 & i=$((i+1)); done) & exec sleep 1000`)
	rec, err := r.loadContainer(id)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		return strings.Contains(strings.ToLower(strings.Join(logContents(t, rec.Config.LogPath, "stderr"), "\n")), "fork")
	}, waitFor, tick, "sh reports the forks that failed: %q", logContents(t, rec.Config.LogPath, "stderr"))
	pids, err := r.cgroups.Pids(rec.Cgroups)
	require.NoError(t, err)
	assert.LessOrEqual(t, len(pids), 16, "the pids limit holds")
	require.NoError(t, r.StopContainer(context.Background(), id, 0))
	for _, pid := range pids {
		require.Eventually(t, func() bool { return ended(pid) }, waitFor, tick, "pid %d outlived the stop", pid)
	}
}

// ended reports whether pid is gone or a zombie (killed, not yet reaped by whoever inherited it).
func ended(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(data), ')')
	return i < 0 || i+2 >= len(data) || data[i+2] == 'Z'
}

// A process that calls setsid leaves the workload's process group but not its cgroup: it is
// counted in the stats, killed by the stop, found again by a restarted runtime; removing the
// container and the sandbox leaves no cgroup behind.
func TestCgroupSetsidCountedKilledReadopted(t *testing.T) {
	r, root := cgroupRuntime(t, 0)
	// hostPID: the child's pid, which it prints, is the host's; in a PID namespace of the
	// container's own, the end of the workload (its PID 1) would also end the child.
	sandboxID, id, pod := runInPod(t, r, limits("", "64Mi"), `setsid sh -c 'echo $$; exec sleep 1000' & exec sleep 1000`,
		func(p *corev1.Pod) { p.Spec.HostPID = true })
	rec, err := r.loadContainer(id)
	require.NoError(t, err)
	var escaped int
	require.Eventually(t, func() bool {
		lines := logContents(t, rec.Config.LogPath, "stdout")
		if len(lines) == 0 {
			return false
		}
		escaped, err = strconv.Atoi(strings.TrimSpace(lines[0]))
		return err == nil
	}, waitFor, tick)
	st, err := r.readState(id)
	require.NoError(t, err)
	pgid, _ := syscall.Getpgid(escaped)
	assert.NotEqual(t, st.Pid, pgid, "the child left the workload's process group")

	// A restarted agent finds the cgroup in the records.
	require.NoError(t, r.Close())
	r2 := newTestRuntime(t, Config{StateDir: r.cfg.StateDir, Cgroups: r.cfg.Cgroups})
	require.Eventually(t, func() bool {
		pids, err := r2.cgroups.Pids(rec.Cgroups)
		return err == nil && len(pids) == 2
	}, waitFor, tick, "the workload and the setsid child, counted in the cgroup")
	stats, err := r2.ContainerStats(context.Background(), id)
	require.NoError(t, err)
	assert.Positive(t, stats.MemoryUsageBytes)

	require.NoError(t, r2.StopContainer(context.Background(), id, time.Second))
	require.Eventually(t, func() bool { return ended(escaped) }, waitFor, tick, "the setsid child outlived the stop")
	require.NoError(t, r2.RemoveContainer(context.Background(), id))
	require.NoError(t, r2.RemoveSandbox(context.Background(), sandboxID))
	assert.False(t, cgrouptest.Exists(r2.cgroups.PodPath(pod)), "the pod's cgroup is gone")
	assert.True(t, cgrouptest.Exists(root), "the QoS cgroups stay")
}

// The workload starts in its container's cgroup in every hierarchy (forked there by a thread
// of the supervisor that joined it, or through the init helper), and the supervisor is in
// none of them: its memory is not the container's, and a stop that kills the cgroup spares it.
func TestCgroupHoldsTheWorkloadNotTheSupervisor(t *testing.T) {
	r, _ := cgroupRuntime(t, 0)
	_, id, _ := runInPod(t, r, limits("", "64Mi"), `exec sleep 1000`)
	rec, err := r.loadContainer(id)
	require.NoError(t, err)
	st, err := r.readState(id)
	require.NoError(t, err)
	require.NotEmpty(t, rec.Cgroups)
	for name, dir := range rec.Cgroups {
		data, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		require.NoError(t, err)
		procs := strings.Fields(string(data))
		assert.Equal(t, []string{strconv.Itoa(st.Pid)}, procs, "%s: the workload only", name)
		assert.NotContains(t, procs, strconv.Itoa(st.SupervisorPID), "%s", name)
	}
}
