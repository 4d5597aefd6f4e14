package integration

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/bench/floor"
)

// TestFloorMakesPodsRunningAndDeletesThem: a pod bound to the floor's node turns Running and
// Ready with one status patch; deleted with the default grace period, it is gone at once (the
// floor's DELETE with grace 0). A pod bound to another node is left alone.
func TestFloorMakesPodsRunningAndDeletesThem(t *testing.T) {
	const node = "floor-it"
	ctx := startFloor(t, &floor.Agent{Client: env.NodeClient(t, node), Node: node})

	n, err := env.Admin.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	require.NoError(t, err)
	require.Len(t, n.Status.Conditions, 1)
	assert.Equal(t, corev1.NodeReady, n.Status.Conditions[0].Type)
	assert.Equal(t, corev1.ConditionTrue, n.Status.Conditions[0].Status)

	pods := env.Admin.CoreV1().Pods("default")
	pod := func(name, nodeName string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PodSpec{NodeName: nodeName, AutomountServiceAccountToken: ptr.To(false),
				Containers: []corev1.Container{{Name: "a", Image: "pause"}, {Name: "b", Image: "pause"}}},
		}
	}
	_, err = pods.Create(ctx, pod("mine", node), metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = pods.Create(ctx, pod("other", "another-node"), metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = pods.Delete(context.Background(), "other", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	})

	require.Eventually(t, func() bool {
		p, err := pods.Get(ctx, "mine", metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning
	}, 30*time.Second, 20*time.Millisecond, "pod never Running")
	p, err := pods.Get(ctx, "mine", metav1.GetOptions{})
	require.NoError(t, err)
	ready := false
	for _, c := range p.Status.Conditions {
		ready = ready || c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue
	}
	assert.True(t, ready, "Ready condition: %+v", p.Status.Conditions)
	require.Len(t, p.Status.ContainerStatuses, 2)
	for _, cs := range p.Status.ContainerStatuses {
		assert.NotNil(t, cs.State.Running, cs.Name)
	}

	require.NoError(t, pods.Delete(ctx, "mine", metav1.DeleteOptions{})) // default grace: 30 s
	require.Eventually(t, func() bool {
		_, err := pods.Get(ctx, "mine", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}, 10*time.Second, 20*time.Millisecond, "terminating pod not deleted")

	other, err := pods.Get(ctx, "other", metav1.GetOptions{})
	require.NoError(t, err)
	assert.NotEqual(t, corev1.PodRunning, other.Status.Phase, "a pod of another node was touched")
}

// TestFloorStaticPods: a manifest written into the floor's directory becomes a mirror pod the
// API server admits under NodeRestriction (mirror annotation, owned by the Node) and turns
// Running; removing the file deletes the mirror.
func TestFloorStaticPods(t *testing.T) {
	const node = "floor-static"
	dir := t.TempDir()
	ctx := startFloor(t, &floor.Agent{Client: env.NodeClient(t, node), Node: node, ManifestDir: dir})

	manifest := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  namespace: default\nspec:\n  containers:\n  - name: c\n    image: pause\n"
	tmp := filepath.Join(dir, ".web.yaml.tmp")
	require.NoError(t, os.WriteFile(tmp, []byte(manifest), 0o644))
	require.NoError(t, os.Rename(tmp, filepath.Join(dir, "web.yaml")))

	pods := env.Admin.CoreV1().Pods("default")
	require.Eventually(t, func() bool {
		p, err := pods.Get(ctx, "web-"+node, metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning
	}, 30*time.Second, 20*time.Millisecond, "mirror never Running")

	require.NoError(t, os.Remove(filepath.Join(dir, "web.yaml")))
	require.Eventually(t, func() bool {
		_, err := pods.Get(ctx, "web-"+node, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}, 30*time.Second, 20*time.Millisecond, "mirror not deleted with its manifest")
}

// startFloor runs a until the test ends and waits until it is ready; the context it returns is
// cancelled when the test ends.
func startFloor(t *testing.T, a *floor.Agent) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	require.Eventually(t, a.Ready, 30*time.Second, 20*time.Millisecond, "floor never ready")
	return ctx
}
