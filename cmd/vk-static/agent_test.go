package main

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/vk-static/vk-static/agent"
)

// The Node the agent registers with the mock provider carries the mock's NoSchedule taint
// (so nothing is scheduled onto a simulator) besides --register-with-taints, and advertises no
// kubelet port while nothing serves the kubelet API.
func TestRegisteredNode(t *testing.T) {
	o, err := parse(t, "--hostname-override", "node-a", "--register-with-taints", "dedicated=edge:NoSchedule", "--port", "10250")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := agentConfig(o, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	client := fake.NewClientset()
	cfg.Client = client
	a, err := agent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer func() {
		cancel()
		<-a.Done()
	}()
	go func() { _ = a.Run(ctx) }()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		_, err := client.CoreV1().Nodes().Get(ctx, "node-a", metav1.GetOptions{})
		assert.NoError(c, err)
	}, 10*time.Second, 10*time.Millisecond, "node registered")
	registered, err := client.CoreV1().Nodes().Get(ctx, "node-a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	want := []corev1.Taint{
		{Key: "dedicated", Value: "edge", Effect: corev1.TaintEffectNoSchedule},
		{Key: "virtual-kubelet.io/provider", Value: "mock", Effect: corev1.TaintEffectNoSchedule},
	}
	if got := registered.Spec.Taints; len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("taints %+v, want %+v", got, want)
	}
	if port := registered.Status.DaemonEndpoints.KubeletEndpoint.Port; port != 0 {
		t.Errorf("kubelet endpoint port %d advertised, but nothing serves the kubelet API", port)
	}
}
