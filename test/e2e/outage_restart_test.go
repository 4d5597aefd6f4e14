package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/test/support/agentproc"
	"github.com/vk-static/vk-static/test/support/podwait"
)

// TestAPIPodsRunAfterRebootDuringOutage: the API server stops, and the agent stops under
// --stop-pods-on-exit (a stand-in for a reboot: every container stopped) and starts again with
// no API server to reach. Its API pod — a ConfigMap as env and as a volume, a Secret volume,
// service links and the default service-account token — runs again with the data it had, from
// the node's local copy. Then the API server comes back while the node still cannot reach it, a
// ConfigMap is changed and another pod deleted; once the node reaches it again the pod's volume
// follows the ConfigMap and its environment does not (the kubelet's rules), its status converges
// with no further restart, the deleted pod is stopped and nothing runs twice. It must run alone:
// it stops the package's shared API server.
func TestAPIPodsRunAfterRebootDuringOutage(t *testing.T) { restartDuringOutage(t, true) }

// TestAPIPodsRunOnAfterAgentKilledDuringOutage: the same with the agent killed (SIGKILL) during
// the outage: its containers run on, untouched, and are taken up by the agent started again
// with no API server to reach; a container that then exits is started again with the data it
// had. It must run alone: it stops the package's shared API server.
func TestAPIPodsRunOnAfterAgentKilledDuringOutage(t *testing.T) { restartDuringOutage(t, false) }

func restartDuringOutage(t *testing.T, reboot bool) {
	node := agentproc.NodeName(t)
	proxy := newAPIProxy(t, node)
	args := []string{"--sync-frequency", "2s"}
	if reboot {
		args = append(args, "--stop-pods-on-exit")
	}
	a := startAgent(t, processAgentOptions(t, agentOptions{node: node, apiHost: proxy.URL}, args...))
	ctx := context.Background()
	ns := env.Namespace(t)
	core := env.Admin.CoreV1()

	svc, err := core.Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "backend"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	master, err := core.Services(metav1.NamespaceDefault).Get(ctx, "kubernetes", metav1.GetOptions{})
	require.NoError(t, err)
	_, err = core.ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg"},
		Data: map[string]string{"greeting": "hello"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = core.Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "sec"},
		Data: map[string][]byte{"password": []byte("s3cret")}}, metav1.CreateOptions{})
	require.NoError(t, err)
	const sa = "/var/run/secrets/kubernetes.io/serviceaccount"
	script := `while true; do echo "env=$GREETING vol=$(cat /srv/greeting) secret=$(cat /mnt/password)` +
		` svc=$BACKEND_SERVICE_HOST k8s=$KUBERNETES_SERVICE_HOST tok=$(test -s ` + sa + `/token && echo yes)"; sleep 0.3; done`
	app := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "app"},
		Spec: corev1.PodSpec{
			NodeName:                      a.Node,
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers: []corev1.Container{{
				Name: "main", Image: "busybox", Command: shell(script),
				Env: []corev1.EnvVar{{Name: "GREETING", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}, Key: "greeting"}}}},
				VolumeMounts: []corev1.VolumeMount{{Name: "cfg", MountPath: "/srv"}, {Name: "sec", MountPath: "/mnt"}},
			}},
			Volumes: []corev1.Volume{
				{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}},
				{Name: "sec", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "sec"}}},
			},
		},
	}
	doomed := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "doomed"},
		Spec: corev1.PodSpec{
			NodeName: a.Node, TerminationGracePeriodSeconds: ptr.To[int64](1), AutomountServiceAccountToken: ptr.To(false),
			Containers: []corev1.Container{{Name: "main", Image: "busybox", Command: shell(`while true; do echo tick; sleep 0.3; done`)}},
		},
	}
	for _, p := range []*corev1.Pod{app, doomed} {
		_, err := core.Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	before := podwait.Until(t, env.Admin, ns, "app", 60*time.Second, "Running", podwait.MainRunning)
	podwait.Until(t, env.Admin, ns, "doomed", 60*time.Second, "Running", podwait.MainRunning)
	line := func(greetingEnv, greetingVol string) string {
		return fmt.Sprintf("env=%s vol=%s secret=s3cret svc=%s k8s=%s tok=yes", greetingEnv, greetingVol, svc.Spec.ClusterIP, master.Spec.ClusterIP)
	}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		logs, err := podLogs(ctx, ns, "app", &corev1.PodLogOptions{Container: "main", TailLines: ptr.To[int64](1)})
		require.NoError(c, err)
		assert.Equal(c, line("hello", "hello"), strings.TrimSuffix(logs, "\n"))
	}, 20*time.Second, 200*time.Millisecond, "the container has its data")
	survivor := a.workload(podwait.MainStatus(before))

	// The outage: the node cannot reach the API server, which stops.
	proxy.unreachable.Store(true)
	env.StopAPIServer()
	apiDown := true
	t.Cleanup(func() { // the package's other tests need it
		if apiDown {
			if err := env.StartAPIServer(context.Background()); err != nil {
				t.Errorf("starting the API server again: %v", err)
			}
		}
	})
	if reboot {
		a.Stop() // --stop-pods-on-exit: every container stopped with the agent
		a.noContainerProcesses(10 * time.Second)
	} else {
		a.Kill() // the containers run on
		assert.True(t, survivor.Running(), "pid %d ended with the agent", survivor.Pid)
	}
	a.restart() // with no API server to reach
	if !reboot {
		// Taken up as it was; an exit now is started again, with what the node kept.
		now := a.workload(podwait.MainStatus(before))
		assert.Equal(t, survivor.Pid, now.Pid, "another process after the agent's restart")
		require.NoError(t, syscall.Kill(-survivor.Pid, syscall.SIGKILL))
	}
	doomedInstance := 0 // the killed agent's containers run on
	if reboot {
		doomedInstance = 1
	}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, line("hello", "hello"), lastLogLine(c, a, ns, "app", 1))
		assert.Equal(c, "tick", lastLogLine(c, a, ns, "doomed", doomedInstance))
	}, 60*time.Second, 200*time.Millisecond, "the pods run again during the outage, with the data they had")

	// The API server is back, but not for the node yet: a ConfigMap changes, a pod is deleted.
	require.NoError(t, env.StartAPIServer(ctx))
	apiDown = false
	cm, err := core.ConfigMaps(ns).Get(ctx, "cfg", metav1.GetOptions{})
	require.NoError(t, err)
	cm.Data["greeting"] = "bye"
	_, err = core.ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.NoError(t, core.Pods(ns).Delete(ctx, "doomed", metav1.DeleteOptions{}))
	proxy.unreachable.Store(false)
	back := time.Now()

	podwait.Gone(t, env.Admin, ns, "doomed", 60*time.Second)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		logs, err := podLogs(ctx, ns, "app", &corev1.PodLogOptions{Container: "main", TailLines: ptr.To[int64](1)})
		require.NoError(c, err)
		assert.Equal(c, line("hello", "bye"), strings.TrimSuffix(logs, "\n"), "the volume follows the ConfigMap, the environment does not")
	}, 30*time.Second, 200*time.Millisecond, "the volume refreshed")
	converged := podwait.Until(t, env.Admin, ns, "app", 30*time.Second, "Running, restarted once", func(p *corev1.Pod) error {
		if err := podwait.MainRunning(p); err != nil {
			return err
		}
		if cs := podwait.MainStatus(p); cs.RestartCount != 1 || !cs.Ready {
			return fmt.Errorf("main %s", podwait.Describe(cs))
		}
		return nil
	})
	t.Logf("converged %s after the node reached the API server again", time.Since(back).Round(time.Millisecond))
	for time.Since(back) < 10*time.Second {
		time.Sleep(500 * time.Millisecond) // sampling after the outage, not waiting for a result
	}
	p, err := core.Pods(ns).Get(ctx, "app", metav1.GetOptions{})
	require.NoError(t, err)
	cs := podwait.MainStatus(p)
	require.NotNil(t, cs)
	assert.Equal(t, podwait.MainStatus(converged).ContainerID, cs.ContainerID, "restarted again after the outage")
	assert.Equal(t, int32(1), cs.RestartCount)
	assert.Equal(t, before.UID, p.UID)
	assert.True(t, before.Status.StartTime.Equal(p.Status.StartTime), "startTime %v, was %v", p.Status.StartTime, before.Status.StartTime)
	list, err := core.Pods(ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, list.Items, 1, "pods in the namespace")
	found, err := agentproc.FindContainers(a.Dir, nil)
	require.NoError(t, err)
	assert.Len(t, found.Workloads, 1, "workloads running: %s", found)
	assert.Equal(t, float64(1), a.metric(t, "vk_static_provider_pods"))

	require.NoError(t, core.Pods(ns).Delete(ctx, "app", metav1.DeleteOptions{}))
	podwait.Gone(t, env.Admin, ns, "app", 30*time.Second)
	a.noContainerProcesses(10 * time.Second)
	left, err := filepath.Glob(filepath.Join(a.Dir, "root", "pods", "*"))
	require.NoError(t, err)
	assert.Empty(t, left, "pod directories (and their local copies) left")
}

// lastLogLine is the last line container main of pod namespace/name wrote to its log file for
// restart n, read on the node (the API server may be out of reach): the line's content without
// the CRI log format's time, stream and tag.
func lastLogLine(c *assert.CollectT, a *agent, namespace, name string, n int) string {
	files, err := filepath.Glob(filepath.Join(a.Dir, "log", "pods", namespace+"_"+name+"_*", "main", fmt.Sprintf("%d.log", n)))
	require.NoError(c, err)
	require.Len(c, files, 1, "log files of %s/%s restart %d", namespace, name, n)
	data, err := os.ReadFile(files[0])
	require.NoError(c, err)
	var last string
	for s := bufio.NewScanner(bytes.NewReader(data)); s.Scan(); {
		if fields := strings.SplitN(s.Text(), " ", 4); len(fields) == 4 {
			last = fields[3]
		}
	}
	return last
}
