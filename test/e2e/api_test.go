package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func apiPod(name, node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			NodeName:   node,
			Containers: []corev1.Container{{Name: "main", Image: "nginx:1"}},
		},
	}
}

func TestAPIPodLifecycle(t *testing.T) {
	a := startAgent(t, agentOptions{})
	ns := env.Namespace(t)
	pods := env.Admin.CoreV1().Pods(ns)
	ctx := context.Background()

	running := func(name string) *corev1.Pod {
		var got *corev1.Pod
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			p, err := pods.Get(ctx, name, metav1.GetOptions{})
			require.NoError(c, err)
			if p.Status.Phase != corev1.PodRunning || !hasCondition(p, corev1.PodReady) {
				c.Errorf("phase %q conditions %v", p.Status.Phase, p.Status.Conditions)
				return
			}
			got = p
		}, 10*time.Second, 50*time.Millisecond, name+" Running")
		return got
	}
	gone := func(name string) {
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			_, err := pods.Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return
			}
			c.Errorf("still there (%v)", err)
		}, 15*time.Second, 50*time.Millisecond, name+" gone from the API")
	}
	providerPods := func(want float64) {
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			if n := a.metric(c, "vk_static_provider_pods"); n != want {
				c.Errorf("provider runs %v", n)
			}
		}, 10*time.Second, 50*time.Millisecond, fmt.Sprintf("provider runs %v pods", want))
	}

	for _, name := range []string{"graceful", "forced"} {
		if _, err := pods.Create(ctx, apiPod(name, a.Node), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	p := running("graceful")
	if p.Status.PodIP == "" || p.Status.HostIP != "127.0.0.1" {
		t.Errorf("podIP %q hostIP %q", p.Status.PodIP, p.Status.HostIP)
	}
	running("forced")
	providerPods(2)

	// Graceful: the agent stops the pod, then deletes it from the API with grace 0.
	if err := pods.Delete(ctx, "graceful", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](5)}); err != nil {
		t.Fatal(err)
	}
	gone("graceful")
	providerPods(1)

	// Forced: gone from the API at once; the agent must still stop it in the provider.
	if err := pods.Delete(ctx, "forced", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	providerPods(0)
	if n := a.metric(t, "vk_static_provider_call_duration_seconds_count", `call="UpdatePod"`); n != 0 {
		t.Errorf("UpdatePod calls = %v, want 0 (no spurious updates from API defaults or status writes)", n)
	}
}

// An API pod whose image is changed gets UpdatePod, not a restart.
func TestAPIPodUpdate(t *testing.T) {
	a := startAgent(t, agentOptions{})
	ns := env.Namespace(t)
	pods := env.Admin.CoreV1().Pods(ns)
	ctx := context.Background()
	if _, err := pods.Create(ctx, apiPod("web", a.Node), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		p, err := pods.Get(ctx, "web", metav1.GetOptions{})
		if err != nil || p.Status.Phase != corev1.PodRunning {
			c.Errorf("%v %v", err, p.Status.Phase)
			return
		}
		p.Spec.Containers[0].Image = "nginx:2"
		_, err = pods.Update(ctx, p, metav1.UpdateOptions{})
		assert.NoError(c, err)
	}, 10*time.Second, 50*time.Millisecond, "Running")
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		if n := a.metric(c, "vk_static_provider_call_duration_seconds_count", `call="UpdatePod"`); n != 1 {
			c.Errorf("UpdatePod calls %v", n)
			return
		}
		p, err := pods.Get(ctx, "web", metav1.GetOptions{})
		require.NoError(c, err)
		if len(p.Status.ContainerStatuses) != 1 || p.Status.ContainerStatuses[0].Image != "nginx:2" {
			c.Errorf("container statuses %+v", p.Status.ContainerStatuses)
		}
	}, 10*time.Second, 50*time.Millisecond, "UpdatePod and the new image running")
	if n := a.metric(t, "vk_static_provider_call_duration_seconds_count", `call="CreatePod"`); n != 1 {
		t.Errorf("CreatePod calls = %v, want 1", n)
	}
}
