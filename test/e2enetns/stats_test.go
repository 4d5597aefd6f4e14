package e2enetns

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/test/support/agentproc"
	"github.com/vk-static/vk-static/test/support/cgrouptest"
	"github.com/vk-static/vk-static/test/support/testenv"
)

// kubectl get --raw on the node's proxy subresource, as metrics-server and users read a
// kubelet through the API server: the API server reaches the agent at its InternalIP (not
// loopback, which it refuses) with its kubelet client certificate, and the agent's Summary and
// /metrics/resource carry the process provider's real numbers for a pod it runs.
func TestNodeProxyStats(t *testing.T) {
	ctx := context.Background()
	// Its pods' cgroups under the test's own (the numbers come from them), removed afterwards.
	a := startAgent(t, "node-a", "--node-ip", NodeIP.String(), "--address", NodeIP.String(), "--provider", "process", "--process-allow-host-network", "--cgroup-root", cgrouptest.Root(t))
	ns := env.Namespace(t)
	// Some CPU time first (a tick is 10 ms), then a process that stays.
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "busy"},
		Spec: corev1.PodSpec{
			NodeName:                      a.Node,
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers: []corev1.Container{{Name: "main", Image: "busybox", Command: []string{"sh", "-c",
				"i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done; exec sleep 600"}}},
		},
	}
	_, err := env.Admin.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	require.NoError(t, err)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		n, err := env.Admin.CoreV1().Nodes().Get(ctx, a.Node, metav1.GetOptions{})
		require.NoError(c, err)
		assert.Contains(c, n.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: NodeIP.String()})
		assert.Equal(c, a.APIPort, int(n.Status.DaemonEndpoints.KubeletEndpoint.Port))
		p, err := env.Admin.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
		require.NoError(c, err)
		assert.Equal(c, corev1.PodRunning, p.Status.Phase)
	}, 30*time.Second, 100*time.Millisecond, "the Node at %s and pod %s/%s running", NodeIP, ns, pod.Name)

	k := newKubectl(t)
	proxy := "/api/v1/nodes/" + a.Node + "/proxy"

	var summary statsv1alpha1.Summary
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		raw, err := k.getRaw(proxy + "/stats/summary")
		require.NoError(c, err)
		summary = statsv1alpha1.Summary{}
		require.NoError(c, json.Unmarshal(raw, &summary), "%s", raw)
		ps := findPodStats(summary, ns, pod.Name)
		require.NotNil(c, ps, "pod %s/%s in the Summary: %s", ns, pod.Name, raw)
		// The shell's loop is done once the pod is measured: its CPU time stays with the process.
		require.NotNil(c, ps.CPU, "%s", raw)
		assert.NotZero(c, ptr.Deref(ps.CPU.UsageCoreNanoSeconds, 0), "pod CPU: %s", raw)
		require.NotNil(c, ps.Memory, "%s", raw)
		assert.NotZero(c, ptr.Deref(ps.Memory.WorkingSetBytes, 0), "pod memory: %s", raw)
		require.Len(c, ps.Containers, 1, "%s", raw)
		assert.Equal(c, "main", ps.Containers[0].Name)
	}, 20*time.Second, 200*time.Millisecond, "the Summary through the API server")
	assert.Equal(t, a.Node, summary.Node.NodeName)

	raw, err := k.getRaw(proxy + "/metrics/resource")
	require.NoError(t, err)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(raw))
	require.NoError(t, err, "%s", raw)
	for _, name := range []string{"pod_cpu_usage_seconds_total", "pod_memory_working_set_bytes", "container_cpu_usage_seconds_total", "container_memory_working_set_bytes"} {
		var values []float64
		for _, m := range families[name].GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["namespace"] == ns && labels["pod"] == pod.Name {
				values = append(values, m.GetCounter().GetValue()+m.GetGauge().GetValue()+m.GetUntyped().GetValue())
			}
		}
		if assert.Len(t, values, 1, "%s series of %s/%s: %s", name, ns, pod.Name, raw) {
			assert.Positive(t, values[0], "%s of %s/%s: %s", name, ns, pod.Name, raw)
		}
	}

	// The pod deleted, the agent stops its processes: none is left for the clean-up to kill.
	require.NoError(t, env.Admin.CoreV1().Pods(ns).Delete(ctx, pod.Name, metav1.DeleteOptions{}))
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		procs, err := agentproc.ContainerProcesses(a.Dir)
		require.NoError(c, err)
		assert.Empty(c, procs)
	}, 20*time.Second, 100*time.Millisecond, "the pod's processes end")
}

// The reason for this package: at a loopback address, as everywhere else in the tests, the
// agent is out of the API server's reach for nodes/proxy. Should this pass, the tests here
// would need no namespace.
func TestNodeProxyRefusesLoopback(t *testing.T) {
	ctx := context.Background()
	a := startAgent(t, "node-b")
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		n, err := env.Admin.CoreV1().Nodes().Get(ctx, a.Node, metav1.GetOptions{})
		require.NoError(c, err)
		assert.Contains(c, n.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "127.0.0.1"})
		assert.Equal(c, a.APIPort, int(n.Status.DaemonEndpoints.KubeletEndpoint.Port))
	}, 30*time.Second, 100*time.Millisecond, "the Node at 127.0.0.1")

	_, err := newKubectl(t).getRaw("/api/v1/nodes/" + a.Node + "/proxy/stats/summary")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "address not allowed")
}

func findPodStats(s statsv1alpha1.Summary, namespace, name string) *statsv1alpha1.PodStats {
	for i := range s.Pods {
		if s.Pods[i].PodRef.Namespace == namespace && s.Pods[i].PodRef.Name == name {
			return &s.Pods[i]
		}
	}
	return nil
}

// startAgent runs an agent with the identity of node, args after agentproc's loopback defaults
// and its mock provider (a later flag wins), and a directory of its own. When the test ends it
// is stopped, and whatever still runs for its containers is killed and fails the test
// (agentproc.StartInTest).
func startAgent(t *testing.T, node string, args ...string) *agentproc.Agent {
	t.Helper()
	return agentproc.StartInTest(t, agentproc.Config{Binary: agentBinary, Dir: t.TempDir(), Node: node, Env: env, Args: args})
}

// kubectl runs the control plane's kubectl as the cluster's administrator.
type kubectl struct{ path, kubeconfig, home string }

func newKubectl(t *testing.T) *kubectl {
	t.Helper()
	path, err := env.Kubectl()
	require.NoError(t, err)
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "admin.kubeconfig")
	require.NoError(t, testenv.WriteKubeconfig(kubeconfig, env.AdminConfig))
	// HOME keeps kubectl's discovery cache out of the real home directory.
	return &kubectl{path: path, kubeconfig: kubeconfig, home: dir}
}

// getRaw is kubectl get --raw path: its standard output, or an error with its exit code and
// standard error.
func (k *kubectl) getRaw(path string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, k.path, "--kubeconfig", k.kubeconfig, "get", "--raw", path)
	cmd.Env = append(os.Environ(), "HOME="+k.home)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("kubectl get --raw %s: %w: %s", path, err, stderr.String())
	}
	return stdout.Bytes(), nil
}
