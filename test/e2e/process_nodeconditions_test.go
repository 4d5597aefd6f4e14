package e2e

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestProcessNodeConditions: with the process provider the Node's Ready follows the process
// runtime's own health (its state directory, supervisor binary and supervisors: healthy here),
// the pressure conditions are measured (none on this machine by the kubelet's defaults), /healthz
// says ok, and nodeInfo names the machine and the runtime (issue 26).
func TestProcessNodeConditions(t *testing.T) {
	a := startProcessAgent(t, "--runtime-status-period", "1s")
	var node *corev1.Node
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		n, err := env.Admin.CoreV1().Nodes().Get(context.Background(), a.Node, metav1.GetOptions{})
		require.NoError(c, err)
		reasons := map[corev1.NodeConditionType]string{}
		for _, cond := range n.Status.Conditions {
			reasons[cond.Type] = string(cond.Status) + " " + cond.Reason
		}
		assert.Equal(c, "True KubeletReady", reasons[corev1.NodeReady])
		assert.Equal(c, "False KubeletHasSufficientMemory", reasons[corev1.NodeMemoryPressure])
		assert.Equal(c, "False KubeletHasNoDiskPressure", reasons[corev1.NodeDiskPressure])
		assert.Equal(c, "False KubeletHasSufficientPID", reasons[corev1.NodePIDPressure])
		node = n
	}, 30*time.Second, 100*time.Millisecond, "node conditions")
	assert.True(t, strings.HasPrefix(node.Status.NodeInfo.ContainerRuntimeVersion, "process://"), node.Status.NodeInfo.ContainerRuntimeVersion)
	assert.NotEmpty(t, node.Status.NodeInfo.KernelVersion)
	assert.NotEmpty(t, node.Status.NodeInfo.BootID)

	resp, err := http.Get(a.Healthz + "/healthz") //nolint:noctx // a test's local endpoint
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
}
