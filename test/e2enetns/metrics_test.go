package e2enetns

import (
	"bytes"
	"context"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/test/support/agentproc"
	"github.com/vk-static/vk-static/test/support/cgrouptest"
)

// The two metrics endpoints Prometheus scrapes from every kubelet, read as it reads them
// through the API server (kubectl get --raw /api/v1/nodes/<node>/proxy/metrics/...) with the
// cluster administrator's credentials, from a process agent running a pod with a readiness
// probe: /metrics/probes counts the probe's passes under the kubelet's labels, pod_uid the API
// pod's UID; /metrics/cadvisor has cAdvisor's series for the container (its image from the
// spec) and its pod (container ""), and the machine's from the Node's capacity.
func TestNodeProxyProbeAndCadvisorMetrics(t *testing.T) {
	ctx := context.Background()
	a := startAgent(t, "node-m", "--node-ip", NodeIP.String(), "--address", NodeIP.String(), "--provider", "process", "--process-allow-host-network", "--cgroup-root", cgrouptest.Root(t))
	ns := env.Namespace(t)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "probed"},
		Spec: corev1.PodSpec{
			NodeName:                      a.Node,
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers: []corev1.Container{{Name: "main", Image: "busybox", Command: []string{"sleep", "600"},
				ReadinessProbe: &corev1.Probe{
					ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}},
					PeriodSeconds: 1,
				}}},
		},
	}
	created, err := env.Admin.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	require.NoError(t, err)
	var node *corev1.Node
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		n, err := env.Admin.CoreV1().Nodes().Get(ctx, a.Node, metav1.GetOptions{})
		require.NoError(c, err)
		assert.Contains(c, n.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: NodeIP.String()})
		assert.Equal(c, a.APIPort, int(n.Status.DaemonEndpoints.KubeletEndpoint.Port))
		node = n
		p, err := env.Admin.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
		require.NoError(c, err)
		require.Len(c, p.Status.ContainerStatuses, 1)
		assert.True(c, p.Status.ContainerStatuses[0].Ready, "the readiness probe passed")
	}, 30*time.Second, 100*time.Millisecond, "the Node at %s and pod %s/%s ready", NodeIP, ns, pod.Name)

	k := newKubectl(t)
	proxy := "/api/v1/nodes/" + a.Node + "/proxy"
	scrape := func(c require.TestingT, path string) map[string]*dto.MetricFamily {
		raw, err := k.getRaw(proxy + path)
		require.NoError(c, err)
		parser := expfmt.NewTextParser(model.UTF8Validation)
		families, err := parser.TextToMetricFamilies(bytes.NewReader(raw))
		require.NoError(c, err, "%s", raw)
		return families
	}
	// find is the value of the one series of family with exactly these label values, and
	// whether there is one.
	find := func(f *dto.MetricFamily, want map[string]string) (float64, bool) {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			match := true
			for k, v := range want {
				match = match && labels[k] == v
			}
			if match {
				return m.GetCounter().GetValue() + m.GetGauge().GetValue(), true
			}
		}
		return 0, false
	}

	probes := scrape(t, "/metrics/probes")
	f := probes["prober_probe_total"]
	require.NotNil(t, f, "prober_probe_total in %v", probes)
	assert.Equal(t, dto.MetricType_COUNTER, f.GetType())
	passes, ok := find(f, map[string]string{"probe_type": "Readiness", "result": "successful", "container": "main",
		"pod": pod.Name, "namespace": ns, "pod_uid": string(created.UID)})
	require.True(t, ok, "the readiness probe's passes: %v", f)
	assert.GreaterOrEqual(t, passes, 1.0)
	_, ok = find(probes["prober_probe_duration_seconds"], map[string]string{"probe_type": "Readiness", "container": "main", "pod": pod.Name, "namespace": ns})
	assert.True(t, ok, "the passes timed")
	assert.Contains(t, probes, "process_start_time_seconds")

	require.EventuallyWithT(t, func(c *assert.CollectT) {
		cadvisor := scrape(c, "/metrics/cadvisor")
		container := map[string]string{"namespace": ns, "pod": pod.Name, "container": "main", "image": "busybox"}
		podLevel := map[string]string{"namespace": ns, "pod": pod.Name, "container": "", "image": ""}
		for _, name := range []string{"container_cpu_usage_seconds_total", "container_memory_working_set_bytes"} {
			for _, labels := range []map[string]string{container, podLevel} {
				v, ok := find(cadvisor[name], labels)
				if assert.True(c, ok, "%s %v", name, labels) {
					assert.Positive(c, v, "%s %v", name, labels)
				}
			}
		}
		_, ok := find(cadvisor["container_start_time_seconds"], container)
		assert.True(c, ok, "container_start_time_seconds")
		cores, ok := find(cadvisor["machine_cpu_cores"], map[string]string{"machine_id": node.Status.NodeInfo.MachineID, "boot_id": node.Status.NodeInfo.BootID})
		if assert.True(c, ok, "machine_cpu_cores") {
			assert.Equal(c, float64(node.Status.Capacity.Cpu().Value()), cores)
		}
		memory, ok := find(cadvisor["machine_memory_bytes"], nil)
		if assert.True(c, ok, "machine_memory_bytes") {
			assert.Equal(c, float64(node.Status.Capacity.Memory().Value()), memory)
		}
	}, 20*time.Second, 200*time.Millisecond, "/metrics/cadvisor through the API server")

	// The pod deleted, the agent stops its processes: none is left for the clean-up to kill.
	require.NoError(t, env.Admin.CoreV1().Pods(ns).Delete(ctx, pod.Name, metav1.DeleteOptions{}))
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		procs, err := agentproc.ContainerProcesses(a.Dir)
		require.NoError(c, err)
		assert.Empty(c, procs)
	}, 20*time.Second, 100*time.Millisecond, "the pod's processes end")
}
