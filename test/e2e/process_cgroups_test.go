package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/podutil"
	"github.com/vk-static/vk-static/test/support/cgrouptest"
	"github.com/vk-static/vk-static/test/support/podwait"
)

// Limits enforced by cgroups, as under the kubelet: a container that reads 200 MB into memory
// under a 48Mi limit is OOM-killed — terminated, reason OOMKilled, exit code 137 — and restarted
// by its restart policy; its pod's cgroup is under kubepods/burstable, and nothing of it is left
// once the pod is removed.
func TestProcessMemoryLimitOOMKilled(t *testing.T) {
	t.Parallel()
	root := cgrouptest.Root(t)
	a := startProcessAgent(t, "--cgroup-root", root)
	pod := staticPod("oom", shell(`echo started; exec dd if=/dev/zero of=/dev/null bs=200M count=1`)...)
	pod.Spec.RestartPolicy = corev1.RestartPolicyAlways
	pod.Spec.TerminationGracePeriodSeconds = ptr.To[int64](1)
	pod.Spec.Containers[0].Resources = corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("48Mi")}}
	a.writePod(pod)

	mirror := a.waitMirror("oom", 60*time.Second, "OOMKilled and restarted", func(p *corev1.Pod) error {
		cs := podwait.MainStatus(p)
		if cs == nil || cs.RestartCount < 1 || cs.LastTerminationState.Terminated == nil {
			return fmt.Errorf("main %s", podwait.Describe(cs))
		}
		if term := cs.LastTerminationState.Terminated; term.Reason != "OOMKilled" || term.ExitCode != 137 {
			return fmt.Errorf("last termination %+v", term)
		}
		return nil
	})
	assert.Equal(t, corev1.PodQOSBurstable, mirror.Status.QOSClass)
	uid := mirror.Annotations[podutil.ConfigMirrorAnnotationKey]
	require.NotEmpty(t, uid)
	podCgroup := root + "/kubepods/burstable/pod" + uid
	assert.True(t, cgrouptest.Exists(podCgroup), "the pod's cgroup %s", podCgroup)
	logs, err := podLogs(context.Background(), mirror.Namespace, mirror.Name, &corev1.PodLogOptions{Container: "main", Previous: true})
	require.NoError(t, err)
	assert.Equal(t, "started", strings.TrimSpace(logs), "dd printed nothing: killed before it ended")

	a.removePods("oom")
	require.Eventually(t, func() bool { return !cgrouptest.Exists(podCgroup) }, 20*time.Second, 100*time.Millisecond, "the pod's cgroup is removed with the pod")
}

// A process that calls setsid leaves the workload's session, not its cgroup: the memory it
// holds is in the container's stats (/stats/summary, as metrics-server reads it); after a kill -9
// and restart of the agent, which finds the cgroups again from its records, removing the pod
// kills it too, and leaves no cgroup behind.
func TestProcessSetsidChildInCgroupAcrossRestart(t *testing.T) {
	t.Parallel()
	root := cgrouptest.Root(t)
	a := startProcessAgent(t, "--cgroup-root", root)
	dir := sharedDir(t)
	// ($$$$ is the kubelet's escape of $$.) The escaped session holds 64 MB: dd's buffer, filled from /dev/zero, while it waits on
	// a pipe nobody reads.
	a.writePod(staticPod("escaper", shell(`setsid sh -c 'echo $$$$ > `+dir+`/escaped; dd if=/dev/zero bs=64M count=1 | sleep 1000' & exec sleep 1000`)...))
	mirror := a.waitMirror("escaper", 30*time.Second, "Running", podwait.MainRunning)
	uid := mirror.Annotations[podutil.ConfigMirrorAnnotationKey]
	podCgroup := root + "/kubepods/besteffort/pod" + uid
	var escaped int
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		data, err := os.ReadFile(filepath.Join(dir, "escaped"))
		require.NoError(c, err)
		escaped, err = strconv.Atoi(strings.TrimSpace(string(data)))
		require.NoError(c, err)
	}, 10*time.Second, 50*time.Millisecond, "the setsid child's pid")
	sid, err := unix.Getsid(escaped)
	require.NoError(t, err)
	assert.Equal(t, escaped, sid, "a session of its own")
	cg, err := os.ReadFile("/proc/" + strconv.Itoa(escaped) + "/cgroup")
	require.NoError(t, err)
	assert.Contains(t, string(cg), podCgroup+"/", "the setsid child is in its container's cgroup")
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		ws := containerWorkingSet(c, a, mirror.Namespace, mirror.Name, "main")
		assert.Greater(c, ws, uint64(60<<20), "the container's working set counts the setsid child's 64 MB")
	}, 20*time.Second, 500*time.Millisecond, "stats")

	a.Kill()
	a.restart()
	a.removePod("escaper")
	a.mirrorGone("escaper")
	require.Eventually(t, func() bool {
		_, err := os.Stat("/proc/" + strconv.Itoa(escaped))
		return err != nil || processZombie(escaped)
	}, 10*time.Second, 50*time.Millisecond, "the setsid child outlived its pod")
	a.noContainerProcesses(10 * time.Second)
	require.Eventually(t, func() bool { return !cgrouptest.Exists(podCgroup) }, 20*time.Second, 100*time.Millisecond, "the pod's cgroup is removed with the pod")
}

// processZombie reports whether pid has ended and waits to be reaped.
func processZombie(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(data), ')')
	return i > 0 && i+2 < len(data) && data[i+2] == 'Z'
}

// containerWorkingSet is a container's memory working set in the agent's /stats/summary.
func containerWorkingSet(c require.TestingT, a *agent, namespace, pod, container string) uint64 {
	summary, raw := a.statsSummary(c)
	for _, p := range summary.Pods {
		if p.PodRef.Namespace != namespace || p.PodRef.Name != pod {
			continue
		}
		for _, cs := range p.Containers {
			if cs.Name == container && cs.Memory != nil && cs.Memory.WorkingSetBytes != nil {
				return *cs.Memory.WorkingSetBytes
			}
		}
	}
	require.Fail(c, "no memory stats", "%s/%s %s in %s", namespace, pod, container, raw)
	return 0
}

// A CPU limit throttles a busy loop, as the container cgroup's cpu.stat shows; --pod-pids-limit
// stops a fork bomb at the pod's cgroup, and the node goes on: the bomb's own container and a
// bystander keep running, and removing the pods leaves nothing.
func TestProcessCPUQuotaAndPidsLimit(t *testing.T) {
	t.Parallel()
	root := cgrouptest.Root(t)
	a := startProcessAgent(t, "--cgroup-root", root, "--pod-pids-limit", "24")
	spinner := staticPod("spinner", shell(`while :; do :; done`)...)
	spinner.Spec.Containers[0].Resources = corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}
	a.writePod(spinner)
	a.writePod(staticPod("bomb", shell(`(while :; do sleep 600 & done) 2>/dev/null & exec sleep 1000`)...))
	a.writePod(staticPod("bystander", shell(`exec sleep 1000`)...))

	sp := a.waitMirror("spinner", 30*time.Second, "Running", podwait.MainRunning)
	dir := "kubepods/burstable/pod" + sp.Annotations[podutil.ConfigMirrorAnnotationKey] + "/" + strings.TrimPrefix(podwait.MainStatus(sp).ContainerID, "process://")
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		stat := cgroupFile(c, root+"/"+dir, "cpu.stat")
		var throttled int
		for _, line := range strings.Split(stat, "\n") {
			if n, ok := strings.CutPrefix(line, "nr_throttled "); ok {
				throttled, _ = strconv.Atoi(n)
			}
		}
		assert.Positive(c, throttled, "cpu.stat:\n%s", stat)
	}, 20*time.Second, 200*time.Millisecond, "the quota throttles the loop")

	bomb := a.waitMirror("bomb", 30*time.Second, "Running", podwait.MainRunning)
	bombCgroup := root + "/kubepods/besteffort/pod" + bomb.Annotations[podutil.ConfigMirrorAnnotationKey]
	assert.Equal(t, "24", strings.TrimSpace(cgroupFile(t, bombCgroup, "pids.max")))
	// The loop forks forever: it stops at the limit, which it reaches.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		current, err := strconv.Atoi(strings.TrimSpace(cgroupFile(c, bombCgroup, "pids.current")))
		require.NoError(c, err)
		assert.GreaterOrEqual(c, current, 20)
	}, 20*time.Second, 200*time.Millisecond, "the bomb reaches the pids limit")
	for range 5 { // and stays there
		current, err := strconv.Atoi(strings.TrimSpace(cgroupFile(t, bombCgroup, "pids.current")))
		require.NoError(t, err)
		assert.LessOrEqual(t, current, 24)
	}
	for _, name := range []string{"bomb", "bystander", "spinner"} {
		a.waitMirror(name, 10*time.Second, "still Running", podwait.MainRunning)
	}

	a.removePods("bomb", "bystander", "spinner")
	require.Eventually(t, func() bool { return !cgrouptest.Exists(bombCgroup) && !cgrouptest.Exists(root+"/"+dir) }, 20*time.Second, 100*time.Millisecond, "the pods' cgroups are removed")
}

// cgroupFile is the content of a controller's file of the cgroup p, in whichever hierarchy has
// it (v1's controllers, or v2).
func cgroupFile(c require.TestingT, p, file string) string {
	for _, mnt := range cgrouptest.Mounts() {
		if data, err := os.ReadFile(filepath.Join(mnt, p, file)); err == nil {
			return string(data)
		}
	}
	require.Fail(c, "no such cgroup file", "%s/%s", p, file)
	return ""
}
