package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/test/support/podwait"
)

// A pod's RuntimeClass is read with the node's identity, as the kubelet reads it: one whose
// RuntimeClass has the handler "kata" gets the kubelet's FailedCreatePodSandBox event naming
// the handler and the RuntimeClass (the process provider has no runtime handlers), and one
// whose RuntimeClass no longer exists gets the kubelet's not-found event; both stay Pending,
// as on a kubelet whose runtime lacks the handler (the upstream e2e "RuntimeClass should reject
// a Pod requesting a RuntimeClass with an unconfigured handler").
func TestProcessRuntimeClass(t *testing.T) {
	t.Parallel()
	a := startProcessAgent(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	pods := env.Admin.CoreV1().Pods(ns)
	classes := env.Admin.NodeV1().RuntimeClasses()
	runtimeClass := func(name string) string {
		t.Helper()
		_, err := classes.Create(ctx, &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Handler: "kata"}, metav1.CreateOptions{})
		require.NoError(t, err)
		t.Cleanup(func() { _ = classes.Delete(context.Background(), name, metav1.DeleteOptions{}) })
		return name
	}
	// RuntimeClasses are cluster-wide: named after the test's namespace.
	kata, gone := runtimeClass(ns+"-kata"), runtimeClass(ns+"-gone")
	pod := func(name, class string) {
		t.Helper()
		_, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{
			NodeName: a.Node, RuntimeClassName: ptr.To(class),
			TerminationGracePeriodSeconds: ptr.To[int64](1), AutomountServiceAccountToken: ptr.To(false),
			Containers: []corev1.Container{{Name: "main", Image: "busybox", Command: shell("exec sleep 1000")}},
		}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}

	pod("kata", kata)
	waitEvent(t, ns, "kata", "FailedCreatePodSandBox", fmt.Sprintf(
		`Failed to create pod sandbox: runtime handler "kata" of RuntimeClass %q is not configured: the process provider has no runtime handlers`, kata), 30*time.Second)

	// The API server admits no pod whose RuntimeClass does not exist: this one goes after.
	pod("gone", gone)
	require.NoError(t, classes.Delete(ctx, gone, metav1.DeleteOptions{}))
	waitEvent(t, ns, "gone", "FailedCreatePodSandBox", fmt.Sprintf(
		`Failed to create pod sandbox: runtimeclass.node.k8s.io %q not found`, gone), 30*time.Second)

	for _, name := range []string{"kata", "gone"} {
		p, err := pods.Get(ctx, name, metav1.GetOptions{})
		require.NoError(t, err)
		assert.Equal(t, corev1.PodPending, p.Status.Phase, "%s: %s", name, podwait.Describe(p.Status))
		require.NoError(t, pods.Delete(ctx, name, metav1.DeleteOptions{}))
	}
	for _, name := range []string{"kata", "gone"} {
		podwait.Gone(t, env.Admin, ns, name, 30*time.Second)
	}
	a.noContainerProcesses(10 * time.Second)
}
