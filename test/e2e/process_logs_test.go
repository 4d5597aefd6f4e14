package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/test/support/podwait"
)

// A container logs where the kubelet's do and log shippers read: --pod-logs-dir's
// <namespace>_<name>_<uid>/<container>/0.log, linked from the containers directory beside it
// as <pod>_<namespace>_<container>-<id>.log; kubectl logs reads it; both go with the pod.
func TestProcessContainerLogLayout(t *testing.T) {
	t.Parallel()
	a := startProcessAgent(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	pods := env.Admin.CoreV1().Pods(ns)
	created, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "shipped"}, Spec: corev1.PodSpec{
		NodeName: a.Node, TerminationGracePeriodSeconds: ptr.To[int64](1), AutomountServiceAccountToken: ptr.To(false),
		Containers: []corev1.Container{{Name: "main", Image: "busybox", Command: shell(`echo to the shipper; exec sleep 1000`)}},
	}}, metav1.CreateOptions{})
	require.NoError(t, err)
	p := podwait.Until(t, env.Admin, ns, "shipped", 30*time.Second, "Running", podwait.MainRunning)

	dir := filepath.Join(a.Dir, "log", "pods", ns+"_shipped_"+string(created.UID))
	logFile := filepath.Join(dir, "main", "0.log")
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		data, err := os.ReadFile(logFile)
		require.NoError(c, err)
		assert.Contains(c, string(data), "stdout F to the shipper", "the kubelet's CRI log format")
	}, 10*time.Second, 100*time.Millisecond)
	_, id, _ := strings.Cut(podwait.MainStatus(p).ContainerID, "://")
	link := filepath.Join(a.Dir, "log", "containers", "shipped_"+ns+"_main-"+id+".log")
	target, err := os.Readlink(link)
	require.NoError(t, err)
	assert.Equal(t, logFile, target)
	logs, err := podLogs(ctx, ns, "shipped", &corev1.PodLogOptions{Container: "main"})
	require.NoError(t, err)
	assert.Equal(t, "to the shipper\n", logs)

	require.NoError(t, pods.Delete(ctx, "shipped", metav1.DeleteOptions{}))
	podwait.Gone(t, env.Admin, ns, "shipped", 30*time.Second)
	require.Eventually(t, func() bool {
		_, errDir := os.Stat(dir)
		_, errLink := os.Lstat(link)
		return os.IsNotExist(errDir) && os.IsNotExist(errLink)
	}, 10*time.Second, 100*time.Millisecond, "the pod's logs and the link go with it")
}
