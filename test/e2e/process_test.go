package e2e

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/test/support/agentproc"
	"github.com/vk-static/vk-static/test/support/podwait"
)

// The process provider (the default) against the real control plane: each test runs its own
// agent with --provider process, so they run in parallel. Containers are host processes run by
// the default user (nobody); every test removes its pods and checks that no process is left.

// kubectl logs of a static pod's mirror: the lines its process prints, with timestamps, and
// with follow the lines as they come.
func TestProcessLogsFollowAndTimestamps(t *testing.T) {
	t.Parallel()
	a := startProcessAgent(t)
	ctx := context.Background()
	a.writePod(staticPod("printer", shell(`i=0; while true; do i=$((i+1)); echo "line $i"; sleep 0.3; done`)...))
	a.waitMirror("printer", 30*time.Second, "Running", podwait.MainRunning)
	mirror := a.MirrorName("printer")

	// Plain: exactly the lines printed, in order.
	var printed int
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		logs, err := podLogs(ctx, metav1.NamespaceDefault, mirror, &corev1.PodLogOptions{Container: "main"})
		require.NoError(c, err)
		lines := strings.Split(strings.TrimSuffix(logs, "\n"), "\n")
		if len(lines) < 3 {
			c.Errorf("%d lines: %q", len(lines), logs)
			return
		}
		for i, l := range lines {
			require.Equal(c, fmt.Sprintf("line %d", i+1), l, "logs %q", logs)
		}
		printed = len(lines)
	}, 20*time.Second, 200*time.Millisecond, "plain logs")

	// Follow with timestamps: the stream stays open and brings lines printed after it opened,
	// each with its time, soon after it was printed.
	streamCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	stream, err := env.Admin.CoreV1().Pods(metav1.NamespaceDefault).GetLogs(mirror, &corev1.PodLogOptions{
		Container: "main", Follow: true, Timestamps: true}).Stream(streamCtx)
	require.NoError(t, err)
	defer stream.Close()
	scanner := bufio.NewScanner(stream)
	var last time.Time
	want := 1
	for want <= printed+5 {
		require.True(t, scanner.Scan(), "the followed stream ended after line %d: %v", want-1, scanner.Err())
		received := time.Now()
		ts, text, ok := strings.Cut(scanner.Text(), " ")
		require.True(t, ok, "no timestamp: %q", scanner.Text())
		at, err := time.Parse(time.RFC3339Nano, ts)
		require.NoError(t, err, "timestamp of %q", scanner.Text())
		require.Equal(t, fmt.Sprintf("line %d", want), text)
		require.False(t, at.Before(last), "timestamps go back: %s after %s", at, last)
		require.WithinDuration(t, received, at, time.Minute, "timestamp of %q is not the time it was printed", text)
		if want > printed+1 {
			// Printed after the stream opened: delivered as it came, not at the end.
			assert.Less(t, received.Sub(at), 5*time.Second, "line %d printed at %s reached the follower at %s", want, at, received)
			assert.Less(t, at.Sub(last), 2*time.Second, "lines 0.3s apart logged %s apart", at.Sub(last))
		}
		last = at
		want++
	}
	cancel()

	a.removePods("printer")
}

// A container that exits at once: CrashLoopBackOff on the mirror, a restart count that grows,
// back-off between restarts of none, then 10s (and the next 20s, its message says), and
// previous=true logs from the instance before.
func TestProcessCrashLoopBackOff(t *testing.T) {
	t.Parallel()
	a := startProcessAgent(t)
	ctx := context.Background()
	a.writePod(staticPod("crasher", shell(`echo run; exit 3`)...))

	// restartCount 1 in back-off: its last state is instance 1 (the first restart).
	first := a.waitMirror("crasher", 30*time.Second, "CrashLoopBackOff after one restart", func(p *corev1.Pod) error {
		cs := podwait.MainStatus(p)
		if cs == nil || cs.RestartCount != 1 || cs.State.Waiting == nil || cs.State.Waiting.Reason != "CrashLoopBackOff" {
			return fmt.Errorf("main %s", podwait.Describe(cs))
		}
		return nil
	})
	cs1 := podwait.MainStatus(first)
	require.NotNil(t, cs1.LastTerminationState.Terminated, "%s", podwait.Describe(cs1))
	inst1 := *cs1.LastTerminationState.Terminated
	assert.Equal(t, int32(3), inst1.ExitCode)
	assert.Equal(t, "Error", inst1.Reason)
	assert.Equal(t, cs1.ContainerID, inst1.ContainerID, "in back-off the last state is the current (exited) instance")
	assert.Contains(t, cs1.State.Waiting.Message, "back-off 10s")
	// The first restart came without back-off: instance 1 started within moments of the pod
	// (instance 0 ended at once).
	require.NotNil(t, first.Status.StartTime)
	assert.LessOrEqual(t, inst1.StartedAt.Sub(first.Status.StartTime.Time), 5*time.Second,
		"first restart: pod started %s, instance 1 at %s", first.Status.StartTime, inst1.StartedAt)

	// restartCount 2 in back-off: instance 2 started 10s or more after instance 1 ended.
	second := a.waitMirror("crasher", 30*time.Second, "CrashLoopBackOff after two restarts", func(p *corev1.Pod) error {
		cs := podwait.MainStatus(p)
		if cs == nil || cs.RestartCount != 2 || cs.State.Waiting == nil || cs.State.Waiting.Reason != "CrashLoopBackOff" {
			return fmt.Errorf("main %s", podwait.Describe(cs))
		}
		return nil
	})
	// The logs now, before the next restart (20s away) replaces the instances.
	current, errCur := podLogs(ctx, metav1.NamespaceDefault, second.Name, &corev1.PodLogOptions{Container: "main", Timestamps: true})
	previous, errPrev := podLogs(ctx, metav1.NamespaceDefault, second.Name, &corev1.PodLogOptions{Container: "main", Timestamps: true, Previous: true})
	require.NoError(t, errCur)
	require.NoError(t, errPrev)

	cs2 := podwait.MainStatus(second)
	require.NotNil(t, cs2.LastTerminationState.Terminated, "%s", podwait.Describe(cs2))
	inst2 := *cs2.LastTerminationState.Terminated
	assert.Equal(t, int32(3), inst2.ExitCode)
	assert.NotEqual(t, inst1.ContainerID, inst2.ContainerID)
	assert.Contains(t, cs2.State.Waiting.Message, "back-off 20s", "the back-off doubles")
	gap := inst2.StartedAt.Sub(inst1.FinishedAt.Time)
	assert.GreaterOrEqual(t, gap, 10*time.Second, "instance 1 ended %s, instance 2 started %s", inst1.FinishedAt, inst2.StartedAt)
	assert.Less(t, gap, 20*time.Second, "instance 1 ended %s, instance 2 started %s", inst1.FinishedAt, inst2.StartedAt)

	// Each instance printed "run" once; previous is instance 1's, current instance 2's — told
	// apart by their times (status times are whole seconds).
	logTime := func(logs string) time.Time {
		ts, text, ok := strings.Cut(strings.TrimSuffix(logs, "\n"), " ")
		require.True(t, ok, "%q", logs)
		require.Equal(t, "run", text, "%q", logs)
		at, err := time.Parse(time.RFC3339Nano, ts)
		require.NoError(t, err)
		return at
	}
	within := func(at time.Time, inst corev1.ContainerStateTerminated, what string) {
		assert.False(t, at.Before(inst.StartedAt.Add(-time.Second)) || at.After(inst.FinishedAt.Add(time.Second)),
			"%s logs printed at %s, not while the instance ran (%s – %s)", what, at, inst.StartedAt, inst.FinishedAt)
	}
	within(logTime(current), inst2, "current")
	within(logTime(previous), inst1, "previous")
	// kubectl describe shows the back-off, as the node recorded it.
	waitEvent(t, metav1.NamespaceDefault, second.Name, "BackOff", "Back-off restarting failed container main in pod crasher", 10*time.Second)

	a.removePods("crasher")
}

// Removing a manifest stops its pod within the grace period: a process that exits 3s after
// SIGTERM keeps its mirror until it has exited; one that ignores SIGTERM is killed at the
// deadline.
func TestProcessGracePeriod(t *testing.T) {
	t.Parallel()
	a := startProcessAgent(t)
	gentle := staticPod("gentle", shell(`trap "sleep 3; exit 0" TERM; while true; do sleep 0.2; done`)...)
	gentle.Spec.TerminationGracePeriodSeconds = ptr.To[int64](12)
	stubborn := staticPod("stubborn", shell(`trap "" TERM; while true; do sleep 0.2; done`)...)
	stubborn.Spec.TerminationGracePeriodSeconds = ptr.To[int64](4)
	a.writePod(gentle)
	a.writePod(stubborn)
	procs := map[string]agentproc.Workload{}
	for _, name := range []string{"gentle", "stubborn"} {
		p := a.waitMirror(name, 30*time.Second, "Running", podwait.MainRunning)
		procs[name] = a.workload(podwait.MainStatus(p))
		require.True(t, procs[name].Running(), "%s: recorded pid %d does not run", name, procs[name].Pid)
	}

	type ending struct{ exited, mirrorGone time.Duration }
	ends := map[string]*ending{"gentle": {}, "stubborn": {}}
	removed := time.Now()
	a.removePod("gentle")
	a.removePod("stubborn")
	require.Eventually(t, func() bool {
		done := true
		for name, e := range ends {
			since := time.Since(removed)
			if e.exited == 0 && !procs[name].Running() {
				e.exited = since
			}
			if e.mirrorGone == 0 {
				_, err := env.Admin.CoreV1().Pods(metav1.NamespaceDefault).Get(context.Background(), a.MirrorName(name), metav1.GetOptions{})
				if apierrors.IsNotFound(err) {
					e.mirrorGone = time.Since(removed)
					switch {
					case e.exited == 0 && procs[name].Running():
						t.Errorf("%s: the mirror went %s after the manifest, while its process (pid %d) still ran", name, e.mirrorGone, procs[name].Pid)
						e.exited = -1
					case e.exited == 0:
						// It exited between this poll's two looks: by the time the mirror was
						// seen gone, not later.
						e.exited = e.mirrorGone
					}
				}
			}
			done = done && e.exited != 0 && e.mirrorGone != 0
		}
		return done
	}, 30*time.Second, 50*time.Millisecond, "both pods stopped and their mirrors gone")
	t.Logf("gentle: exited after %s, mirror gone after %s; stubborn: exited after %s, mirror gone after %s",
		ends["gentle"].exited, ends["gentle"].mirrorGone, ends["stubborn"].exited, ends["stubborn"].mirrorGone)

	// gentle ran its trap (3s) and was not killed at its deadline (12s).
	assert.GreaterOrEqual(t, ends["gentle"].exited, 3*time.Second, "gentle was stopped before its trap finished")
	assert.Less(t, ends["gentle"].exited, 10*time.Second, "gentle exits 3s after SIGTERM, not at the 12s deadline")
	assert.GreaterOrEqual(t, ends["gentle"].mirrorGone, ends["gentle"].exited)
	// stubborn ignored SIGTERM and lived to its 4s deadline.
	assert.GreaterOrEqual(t, ends["stubborn"].exited, 4*time.Second, "stubborn was killed before its grace period ended")
	assert.Less(t, ends["stubborn"].exited, 10*time.Second, "stubborn was not killed at its deadline")
	assert.GreaterOrEqual(t, ends["stubborn"].mirrorGone, 4*time.Second)
	a.noContainerProcesses(10 * time.Second)
}

// A readiness probe gates Ready: False while it fails, True once it passes.
func TestProcessReadinessProbe(t *testing.T) {
	t.Parallel()
	a := startProcessAgent(t)
	dir := sharedDir(t)
	flag := filepath.Join(dir, "ready")
	pod := staticPod("gated", shell(`while true; do sleep 0.2; done`)...)
	pod.Spec.Containers[0].ReadinessProbe = &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"test", "-f", flag}}},
		PeriodSeconds: 1, FailureThreshold: 1,
	}
	a.writePod(pod)
	running := a.waitMirror("gated", 30*time.Second, "Running", podwait.MainRunning)
	assert.Equal(t, corev1.ConditionFalse, podReady(running), "Ready before any probe passed")
	// A failing probe says why, as the node: the probe ran.
	waitEvent(t, metav1.NamespaceDefault, running.Name, "Unhealthy", "Readiness probe failed", 20*time.Second)
	p, err := env.Admin.CoreV1().Pods(metav1.NamespaceDefault).Get(context.Background(), running.Name, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, corev1.ConditionFalse, podReady(p), "Ready while the probe fails")
	assert.False(t, podwait.MainStatus(p).Ready)

	touch(t, flag)
	ready := a.waitMirror("gated", 20*time.Second, "Ready", func(p *corev1.Pod) error {
		if podReady(p) != corev1.ConditionTrue || !podwait.MainStatus(p).Ready {
			return fmt.Errorf("Ready %q, main %s", podReady(p), podwait.Describe(podwait.MainStatus(p)))
		}
		return nil
	})
	assert.Equal(t, int32(0), podwait.MainStatus(ready).RestartCount)

	// And back: a probe failing again takes Ready away, without a restart.
	require.NoError(t, os.Remove(flag))
	notReady := a.waitMirror("gated", 20*time.Second, "not Ready again", func(p *corev1.Pod) error {
		if podReady(p) != corev1.ConditionFalse || podwait.MainStatus(p).Ready {
			return fmt.Errorf("Ready %q, main %s", podReady(p), podwait.Describe(podwait.MainStatus(p)))
		}
		return podwait.MainRunning(p)
	})
	assert.Equal(t, int32(0), podwait.MainStatus(notReady).RestartCount, "readiness never restarts")
	assert.Equal(t, podwait.MainStatus(ready).ContainerID, podwait.MainStatus(notReady).ContainerID)

	a.removePods("gated")
}

// A liveness probe that starts failing restarts the container: restart count 1, the old
// instance killed by its stop signal, Unhealthy and Killing events.
func TestProcessLivenessProbeRestarts(t *testing.T) {
	t.Parallel()
	a := startProcessAgent(t)
	dir := sharedDir(t)
	alive := filepath.Join(dir, "alive")
	touch(t, alive)
	pod := staticPod("lively", shell(`while true; do sleep 0.2; done`)...)
	pod.Spec.Containers[0].LivenessProbe = &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"test", "-f", alive}}},
		PeriodSeconds: 1, FailureThreshold: 2,
	}
	a.writePod(pod)
	before := a.waitMirror("lively", 30*time.Second, "Running", podwait.MainRunning)
	require.Equal(t, int32(0), podwait.MainStatus(before).RestartCount)
	oldProc := a.workload(podwait.MainStatus(before))

	require.NoError(t, os.Remove(alive))
	after := a.waitMirror("lively", 30*time.Second, "restarted", func(p *corev1.Pod) error {
		cs := podwait.MainStatus(p)
		if cs == nil || cs.RestartCount < 1 || cs.LastTerminationState.Terminated == nil {
			return fmt.Errorf("main %s", podwait.Describe(cs))
		}
		return nil
	})
	touch(t, alive) // the new instance may live
	cs := podwait.MainStatus(after)
	assert.Equal(t, int32(1), cs.RestartCount, "one failed liveness, one restart")
	last := cs.LastTerminationState.Terminated
	assert.Equal(t, podwait.MainStatus(before).ContainerID, last.ContainerID, "the last state is the instance that ran")
	assert.Equal(t, int32(128+int(syscall.SIGTERM)), last.ExitCode, "killed by its stop signal: %+v", last)
	assert.False(t, oldProc.Running(), "the unhealthy instance's process still runs")
	waitEvent(t, metav1.NamespaceDefault, after.Name, "Unhealthy", "Liveness probe failed", 10*time.Second)
	waitEvent(t, metav1.NamespaceDefault, after.Name, "Killing", "failed a probe", 10*time.Second)
	a.waitMirror("lively", 30*time.Second, "running again", func(p *corev1.Pod) error {
		if err := podwait.MainRunning(p); err != nil {
			return err
		}
		if podwait.MainStatus(p).RestartCount < 1 {
			return errors.New("restart count went back")
		}
		return nil
	})

	a.removePods("lively")
}

// An API pod with a configMap volume: the file is at its mountPath in the container, and its
// content follows the ConfigMap. The volume is refreshed every --sync-frequency, as the kubelet
// does on its periodic pod sync.
func TestProcessConfigMapVolume(t *testing.T) {
	t.Parallel()
	a := startProcessAgent(t, "--sync-frequency", "3s")
	ctx := context.Background()
	ns := env.Namespace(t)
	cms := env.Admin.CoreV1().ConfigMaps(ns)
	_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "greeting"}, Data: map[string]string{"greeting": "hello"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	pods := env.Admin.CoreV1().Pods(ns)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "reader"},
		Spec: corev1.PodSpec{
			NodeName: a.Node,
			// The kube-api-access volume the API server would add mounts at
			// /var/run/secrets/kubernetes.io/serviceaccount, which this host lacks (see
			// TestProcessDefaultServiceAccountMount); tokens are TestProcessServiceAccountToken's.
			AutomountServiceAccountToken:  ptr.To(false),
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers: []corev1.Container{{
				Name: "main", Image: "busybox",
				Command:      shell(`while true; do echo "read: $(cat /srv/greeting)"; sleep 0.5; done`),
				VolumeMounts: []corev1.VolumeMount{{Name: "cfg", MountPath: "/srv"}},
			}},
			Volumes: []corev1.Volume{{Name: "cfg", VolumeSource: corev1.VolumeSource{
				ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "greeting"}}}}},
		},
	}
	_, err = pods.Create(ctx, pod, metav1.CreateOptions{})
	require.NoError(t, err)
	podwait.Until(t, env.Admin, ns, "reader", 30*time.Second, "Running", podwait.MainRunning)

	lastLine := func(c *assert.CollectT) string {
		logs, err := podLogs(ctx, ns, "reader", &corev1.PodLogOptions{Container: "main", TailLines: ptr.To[int64](1)})
		require.NoError(c, err)
		return strings.TrimSuffix(logs, "\n")
	}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, "read: hello", lastLine(c))
	}, 20*time.Second, 200*time.Millisecond, "the container reads the config map's file")
	// What the mount hides is the host's own /srv: the container sees the volume only there.
	_, err = os.Stat("/srv/greeting")
	assert.True(t, os.IsNotExist(err), "the volume leaked onto the host's /srv: %v", err)

	cm, err := cms.Get(ctx, "greeting", metav1.GetOptions{})
	require.NoError(t, err)
	cm.Data["greeting"] = "bye"
	_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
	require.NoError(t, err)
	updated := time.Now()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, "read: bye", lastLine(c))
	}, 30*time.Second, 500*time.Millisecond, "the file follows the config map within --sync-frequency (3s), not the 1m default")
	t.Logf("config map update seen in the container after %s", time.Since(updated))

	require.NoError(t, pods.Delete(ctx, "reader", metav1.DeleteOptions{}))
	podwait.Gone(t, env.Admin, ns, "reader", 30*time.Second)
	a.noContainerProcesses(10 * time.Second)
}

// kill -9 of the agent leaves its containers running; the agent started again takes them up:
// the same processes, restart counts unchanged, still Running, logging on to the same files.
func TestProcessAgentKilledContainersRunOn(t *testing.T) {
	t.Parallel()
	const n = 20
	a := startProcessAgent(t)
	names := make([]string, n)
	for i := range names {
		names[i] = "sleeper" + strconv.Itoa(i)
		a.writePod(staticPod(names[i], shell(`while true; do echo tick; sleep 0.2; done`)...))
	}
	type before struct {
		containerID string
		pid         int
		startedAt   metav1.Time
	}
	was := map[string]before{}
	for _, name := range names {
		p := a.waitMirror(name, 60*time.Second, "Running", podwait.MainRunning)
		cs := podwait.MainStatus(p)
		w := a.workload(cs)
		require.True(t, w.Running())
		was[name] = before{containerID: cs.ContainerID, pid: w.Pid, startedAt: cs.State.Running.StartedAt}
	}
	workloads, err := agentproc.Workloads(a.Dir)
	require.NoError(t, err)
	require.Len(t, workloads, n)
	logs := a.logFiles()
	require.Len(t, logs, n)
	sizes := map[string]os.FileInfo{}
	for _, path := range logs {
		fi, err := os.Stat(path)
		require.NoError(t, err)
		sizes[path] = fi
	}

	a.Kill()
	for _, w := range workloads {
		assert.True(t, w.Running(), "pid %d ended with the agent", w.Pid)
	}
	a.restart()

	for _, name := range names {
		p := a.waitMirror(name, 30*time.Second, "Running after the restart", podwait.MainRunning)
		cs := podwait.MainStatus(p)
		assert.Equal(t, was[name].containerID, cs.ContainerID, "%s: another container", name)
		assert.Equal(t, int32(0), cs.RestartCount, "%s restarted", name)
		assert.True(t, was[name].startedAt.Time.Equal(cs.State.Running.StartedAt.Time), "%s: started at %s, now %s", name, was[name].startedAt, cs.State.Running.StartedAt)
		w := a.workload(cs)
		assert.Equal(t, was[name].pid, w.Pid, "%s: another process", name)
		assert.True(t, w.Running(), "%s: pid %d", name, w.Pid)
	}
	after, err := agentproc.Workloads(a.Dir)
	require.NoError(t, err)
	assert.ElementsMatch(t, workloads, after, "the same workloads recorded")
	// The logs go on in the same files, and nothing new: they keep growing.
	assert.ElementsMatch(t, logs, a.logFiles())
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		for path, old := range sizes {
			fi, err := os.Stat(path)
			require.NoError(c, err)
			assert.True(c, os.SameFile(old, fi), "%s replaced", path)
			assert.Greater(c, fi.Size(), old.Size(), "%s does not grow", path)
		}
	}, 10*time.Second, 200*time.Millisecond, "logs grow")
	// And through the API: lines after the restart.
	tail, err := podLogs(context.Background(), metav1.NamespaceDefault, a.MirrorName(names[0]), &corev1.PodLogOptions{Container: "main", SinceSeconds: ptr.To[int64](1)})
	require.NoError(t, err)
	assert.Contains(t, tail, "tick")

	// The restarted agent watches the containers it took up: an exit is seen and restarted.
	victim := a.workload(podwait.MainStatus(a.waitMirror(names[1], 10*time.Second, "Running", podwait.MainRunning)))
	require.NoError(t, syscall.Kill(-victim.Pid, syscall.SIGKILL))
	restarted := a.waitMirror(names[1], 30*time.Second, "restarted after its process was killed", func(p *corev1.Pod) error {
		cs := podwait.MainStatus(p)
		if cs == nil || cs.RestartCount != 1 || cs.State.Running == nil {
			return fmt.Errorf("main %s", podwait.Describe(cs))
		}
		return nil
	})
	if last := podwait.MainStatus(restarted).LastTerminationState.Terminated; assert.NotNil(t, last) {
		assert.Equal(t, int32(128+int(syscall.SIGKILL)), last.ExitCode)
		assert.Equal(t, was[names[1]].containerID, last.ContainerID)
	}

	a.removePods(names...)
}

// Bad input is reported where the user looks, and the other pods go on: a missing executable
// in the container's state, root without --process-allow-root as the pod's Failed status, a
// hostPath outside --process-allowed-host-paths as FailedMount — static pods held to the API
// pods' rules by --process-restrict-static-pods, which the refusals name.
func TestProcessBadInput(t *testing.T) {
	t.Parallel()
	a := startProcessAgent(t, "--process-restrict-static-pods")
	a.writePod(staticPod("bystander", shell(`while true; do sleep 0.2; done`)...))
	bystander := podwait.MainStatus(a.waitMirror("bystander", 30*time.Second, "Running", podwait.MainRunning))

	a.writePod(staticPod("missing", "vk-static-e2e-no-such-command", "--flag"))
	root := staticPod("rooted", shell(`sleep 1000`)...)
	root.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](0)}
	a.writePod(root)
	hostPath := staticPod("hostpath", shell(`sleep 1000`)...)
	hostPath.Spec.Volumes = []corev1.Volume{{Name: "etc", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/etc"}}}}
	hostPath.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "etc", MountPath: "/srv"}}
	a.writePod(hostPath)

	t.Run("missing executable", func(t *testing.T) {
		a.waitMirror("missing", 30*time.Second, "StartError naming the command", func(p *corev1.Pod) error {
			cs := podwait.MainStatus(p)
			if cs == nil {
				return errors.New("no status")
			}
			for _, term := range []*corev1.ContainerStateTerminated{cs.State.Terminated, cs.LastTerminationState.Terminated} {
				if term != nil && term.Reason == "StartError" && strings.Contains(term.Message, `"vk-static-e2e-no-such-command"`) {
					return nil
				}
			}
			return fmt.Errorf("main %s", podwait.Describe(cs))
		})
	})
	t.Run("root", func(t *testing.T) {
		p := a.waitMirror("rooted", 30*time.Second, "Failed", func(p *corev1.Pod) error {
			if p.Status.Phase != corev1.PodFailed {
				return fmt.Errorf("phase %q: %s", p.Status.Phase, p.Status.Message)
			}
			return nil
		})
		assert.Contains(t, p.Status.Message, "--process-allow-root")
		assert.Contains(t, p.Status.Message, "runAsUser")
		assert.Contains(t, p.Status.Message, "--process-restrict-static-pods")
		cs := podwait.MainStatus(p)
		assert.True(t, cs == nil || cs.State.Running == nil, "a refused pod's container runs: %s", podwait.Describe(cs))
	})
	t.Run("hostPath", func(t *testing.T) {
		e := waitEvent(t, metav1.NamespaceDefault, a.MirrorName("hostpath"), "FailedMount", "--process-allowed-host-paths", 30*time.Second)
		assert.Contains(t, e.Message, "/etc")
		assert.Contains(t, e.Message, "--process-restrict-static-pods")
		p, err := env.Admin.CoreV1().Pods(metav1.NamespaceDefault).Get(context.Background(), a.MirrorName("hostpath"), metav1.GetOptions{})
		require.NoError(t, err)
		cs := podwait.MainStatus(p)
		assert.True(t, cs == nil || (cs.State.Running == nil && cs.ContainerID == ""), "the container was started: %s", podwait.Describe(cs))
	})

	// Nothing of this touched the bystander.
	now := podwait.MainStatus(a.waitMirror("bystander", 10*time.Second, "Running", podwait.MainRunning))
	assert.Equal(t, bystander.ContainerID, now.ContainerID)
	assert.Equal(t, int32(0), now.RestartCount)

	names := []string{"bystander", "missing", "rooted", "hostpath"}
	a.removePods(names...)
}

// saFilesScript prints, every half second, what a container finds in a service account
// directory: the namespace, the token's size, the CA's PEM markers.
func saFilesScript(dir string) []string {
	return shell(`while true; do echo "ns=$(cat ` + dir + `/namespace) token=$(wc -c < ` + dir + `/token) ca=$(grep -c CERTIFICATE ` + dir + `/ca.crt)"; sleep 0.5; done`)
}

// checkSAFiles waits until pod namespace/name logs the service account files of namespace.
func checkSAFiles(t *testing.T, namespace, name string) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		logs, err := podLogs(context.Background(), namespace, name, &corev1.PodLogOptions{Container: "main", TailLines: ptr.To[int64](1)})
		require.NoError(c, err)
		var gotNS string
		var token, ca int
		_, err = fmt.Sscanf(strings.TrimSpace(logs), "ns=%s token=%d ca=%d", &gotNS, &token, &ca)
		require.NoError(c, err, "%q", logs)
		assert.Equal(c, namespace, gotNS)
		assert.Greater(c, token, 100, "a JWT")
		assert.Equal(c, 2, ca, "one PEM certificate (BEGIN and END)")
	}, 20*time.Second, 200*time.Millisecond, "the container reads its service account files")
}

// A projected volume as the API server's kube-api-access (a bound service account token, the
// cluster CA, the namespace), mounted where the host has a directory: the token is requested
// with the node's identity and the container reads the three files.
func TestProcessServiceAccountToken(t *testing.T) {
	t.Parallel()
	a := startProcessAgent(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	pods := env.Admin.CoreV1().Pods(ns)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "sa"},
		Spec: corev1.PodSpec{
			NodeName:                      a.Node,
			AutomountServiceAccountToken:  ptr.To(false),
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers: []corev1.Container{{
				Name: "main", Image: "busybox", Command: saFilesScript("/opt"),
				VolumeMounts: []corev1.VolumeMount{{Name: "api-access", MountPath: "/opt"}},
			}},
			Volumes: []corev1.Volume{{Name: "api-access", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To[int64](3607)}},
					{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
						Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
					{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{
						{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
				},
			}}}},
		},
	}
	_, err := pods.Create(ctx, pod, metav1.CreateOptions{})
	require.NoError(t, err)
	podwait.Until(t, env.Admin, ns, "sa", 30*time.Second, "Running", podwait.MainRunning)
	checkSAFiles(t, ns, "sa")

	require.NoError(t, pods.Delete(ctx, "sa", metav1.DeleteOptions{}))
	podwait.Gone(t, env.Admin, ns, "sa", 30*time.Second)
	a.noContainerProcesses(10 * time.Second)
}

// An API pod as users write it: the API server adds the kube-api-access volume at
// /var/run/secrets/kubernetes.io/serviceaccount, and the container reads it there — the process
// provider creates that mount point on the host when it is missing (only under /run/secrets).
func TestProcessDefaultServiceAccountMount(t *testing.T) {
	const dir = "/var/run/secrets/kubernetes.io/serviceaccount"
	t.Parallel()
	a := startProcessAgent(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	pods := env.Admin.CoreV1().Pods(ns)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "sa"},
		Spec: corev1.PodSpec{
			NodeName:                      a.Node,
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers:                    []corev1.Container{{Name: "main", Image: "busybox", Command: saFilesScript(dir)}},
		},
	}
	created, err := pods.Create(ctx, pod, metav1.CreateOptions{})
	require.NoError(t, err)
	require.True(t, slices.ContainsFunc(created.Spec.Volumes, func(v corev1.Volume) bool { return strings.HasPrefix(v.Name, "kube-api-access-") }),
		"the API server added no kube-api-access volume: %+v", created.Spec.Volumes)
	podwait.Until(t, env.Admin, ns, "sa", 30*time.Second, "Running", podwait.MainRunning)
	checkSAFiles(t, ns, "sa")

	require.NoError(t, pods.Delete(ctx, "sa", metav1.DeleteOptions{}))
	podwait.Gone(t, env.Admin, ns, "sa", 30*time.Second)
	a.noContainerProcesses(10 * time.Second)
}
