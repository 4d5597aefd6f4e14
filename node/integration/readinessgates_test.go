package integration

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/vk-static/vk-static/kubeclient/kubeclienttest"
	"github.com/vk-static/vk-static/mirror"
	"github.com/vk-static/vk-static/node"
	"github.com/vk-static/vk-static/podmanager"
	"github.com/vk-static/vk-static/provider"
	"github.com/vk-static/vk-static/sources"
)

// gateProvider runs every pod at once, Ready when each of its readiness gates' conditions, as
// it was last given them (CreatePod, UpdatePod), is True — the kubelet's rule, which the
// lifecycle keeps; it reports only the conditions the agent owns.
type gateProvider struct {
	mu     sync.Mutex
	pods   map[string]*corev1.Pod
	notify func(*corev1.Pod)
}

func (g *gateProvider) status(pod *corev1.Pod) *corev1.Pod {
	ready := corev1.ConditionTrue
	for _, gate := range pod.Spec.ReadinessGates {
		found := false
		for _, c := range pod.Status.Conditions {
			found = found || (c.Type == gate.ConditionType && c.Status == corev1.ConditionTrue)
		}
		if !found {
			ready = corev1.ConditionFalse
		}
	}
	out := pod.DeepCopy()
	out.Status = corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
		{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionTrue},
		{Type: corev1.PodInitialized, Status: corev1.ConditionTrue},
		{Type: corev1.ContainersReady, Status: corev1.ConditionTrue},
		{Type: corev1.PodReady, Status: ready},
	}}
	for _, c := range pod.Spec.Containers {
		out.Status.ContainerStatuses = append(out.Status.ContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image, Ready: true,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}})
	}
	return out
}

func (g *gateProvider) set(pod *corev1.Pod) {
	g.mu.Lock()
	g.pods[pod.Namespace+"/"+pod.Name] = pod
	notify := g.notify
	g.mu.Unlock()
	if notify != nil {
		notify(g.status(pod))
	}
}

func (g *gateProvider) CreatePod(_ context.Context, pod *corev1.Pod) error { g.set(pod); return nil }
func (g *gateProvider) UpdatePod(_ context.Context, pod *corev1.Pod) error { g.set(pod); return nil }
func (g *gateProvider) DeletePod(_ context.Context, pod *corev1.Pod) error {
	g.mu.Lock()
	delete(g.pods, pod.Namespace+"/"+pod.Name)
	g.mu.Unlock()
	return nil
}
func (g *gateProvider) GetPod(_ context.Context, namespace, name string) (*corev1.Pod, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if p, ok := g.pods[namespace+"/"+name]; ok {
		return g.status(p), nil
	}
	return nil, provider.NotFound("pod %s/%s", namespace, name)
}
func (g *gateProvider) GetPodStatus(ctx context.Context, namespace, name string) (*corev1.PodStatus, error) {
	p, err := g.GetPod(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	return &p.Status, nil
}
func (g *gateProvider) GetPods(context.Context) ([]*corev1.Pod, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []*corev1.Pod
	for _, p := range g.pods {
		out = append(out, g.status(p))
	}
	return out, nil
}
func (g *gateProvider) NotifyPods(_ context.Context, cb func(*corev1.Pod)) {
	g.mu.Lock()
	g.notify = cb
	g.mu.Unlock()
}

// TestReadinessGates: a readiness gate's condition set by someone else reaches the provider
// (its Ready follows it), and the agent's status writes never overwrite it.
func TestReadinessGates(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	ns := env.Namespace(t)
	const nodeName, gate = "node-gates", corev1.PodConditionType("example.com/gate")
	client := env.NodeClient(t, nodeName)
	_, err := client.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName}}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = env.Admin.CoreV1().Nodes().Delete(context.Background(), nodeName, metav1.DeleteOptions{}) })

	nodes := mirror.NodeGetterFunc(func(name string) (*corev1.Node, error) {
		return client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	})
	mux := sources.NewMux(nil, sources.NewAPISource(kubeclienttest.Wrap(client), nodeName))
	ctrl, err := node.NewPodController(node.PodControllerConfig{
		NodeName: nodeName, Provider: &gateProvider{pods: map[string]*corev1.Pod{}},
		Pods:    podmanager.NewBasicPodManager(),
		Updates: mux.Updates(), Client: kubeclienttest.Wrap(client), Node: nodes,
		Mirrors: mirror.NewBasicMirrorClient(kubeclienttest.Wrap(client), nodeName, nodes),
	})
	require.NoError(t, err)
	var wg sync.WaitGroup
	wg.Go(func() { mux.Run(ctx) })
	wg.Go(func() { _ = ctrl.Run(ctx) })
	defer func() { cancel(); wg.Wait() }()
	<-ctrl.Ready()

	_, err = env.Admin.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "gated"},
		Spec: corev1.PodSpec{NodeName: nodeName, Containers: []corev1.Container{{Name: "main", Image: "nginx:1"}},
			ReadinessGates: []corev1.PodReadinessGate{{ConditionType: gate}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = env.Admin.CoreV1().Pods(ns).Delete(context.Background(), "gated", *metav1.NewDeleteOptions(0))
	})

	conditions := func(c *assert.CollectT) map[corev1.PodConditionType]corev1.ConditionStatus {
		p, err := env.Admin.CoreV1().Pods(ns).Get(ctx, "gated", metav1.GetOptions{})
		require.NoError(c, err)
		out := map[corev1.PodConditionType]corev1.ConditionStatus{}
		for _, cond := range p.Status.Conditions {
			out[cond.Type] = cond.Status
		}
		return out
	}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		got := conditions(c)
		assert.Equal(c, corev1.ConditionTrue, got[corev1.ContainersReady])
		assert.Equal(c, corev1.ConditionFalse, got[corev1.PodReady])
	}, 10*time.Second, 10*time.Millisecond, "running, not Ready: the gate's condition does not exist")

	setGate := func(status corev1.ConditionStatus) {
		t.Helper()
		require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error { // the agent writes the status meanwhile
			p, err := env.Admin.CoreV1().Pods(ns).Get(ctx, "gated", metav1.GetOptions{})
			if err != nil {
				return err
			}
			found := false
			for i := range p.Status.Conditions {
				if p.Status.Conditions[i].Type == gate {
					p.Status.Conditions[i].Status, found = status, true
				}
			}
			if !found {
				p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: gate, Status: status, LastTransitionTime: metav1.Now()})
			}
			_, err = env.Admin.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
			return err
		}))
	}
	for _, status := range []corev1.ConditionStatus{corev1.ConditionTrue, corev1.ConditionFalse, corev1.ConditionTrue} {
		setGate(status)
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			got := conditions(c)
			assert.Equal(c, status, got[corev1.PodReady], "Ready follows the gate")
			assert.Equal(c, status, got[gate], "the gate's condition as its owner set it")
		}, 10*time.Second, 10*time.Millisecond, "gate %s", status)
	}
}
