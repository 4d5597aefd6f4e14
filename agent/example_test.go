package agent_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vk-static/vk-static/agent"
	"github.com/vk-static/vk-static/kubeclient"
	"github.com/vk-static/vk-static/provider"
)

// instantProvider is a library user's provider in miniature: every pod "runs" the moment it is
// created and stops the moment it is deleted. A real one would start containers, VMs or remote
// jobs here. It pushes status (provider.PodNotifier), so the agent need not poll it.
type instantProvider struct {
	mu     sync.Mutex
	pods   map[string]*corev1.Pod // by namespace/name
	notify func(*corev1.Pod)
}

func (p *instantProvider) CreatePod(_ context.Context, pod *corev1.Pod) error {
	now := metav1.Now()
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &now}
	for _, c := range pod.Spec.Containers {
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, Ready: true,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		})
	}
	p.store(pod)
	return nil
}

func (p *instantProvider) UpdatePod(_ context.Context, pod *corev1.Pod) error {
	p.store(pod)
	return nil
}

func (p *instantProvider) DeletePod(_ context.Context, pod *corev1.Pod) error {
	p.mu.Lock()
	delete(p.pods, pod.Namespace+"/"+pod.Name)
	p.mu.Unlock()
	pod.Status.Phase = corev1.PodSucceeded
	p.notify(pod)
	return nil
}

func (p *instantProvider) GetPod(_ context.Context, namespace, name string) (*corev1.Pod, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if pod, ok := p.pods[namespace+"/"+name]; ok {
		return pod, nil
	}
	return nil, provider.NotFound("pod %s/%s", namespace, name)
}

func (p *instantProvider) GetPodStatus(ctx context.Context, namespace, name string) (*corev1.PodStatus, error) {
	pod, err := p.GetPod(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	return &pod.Status, nil
}

func (p *instantProvider) GetPods(context.Context) ([]*corev1.Pod, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var pods []*corev1.Pod
	for _, pod := range p.pods {
		pods = append(pods, pod)
	}
	return pods, nil
}

func (p *instantProvider) NotifyPods(_ context.Context, cb func(*corev1.Pod)) { p.notify = cb }

// store keeps pod and reports its status; the pod is never modified after it is passed on.
func (p *instantProvider) store(pod *corev1.Pod) {
	p.mu.Lock()
	p.pods[pod.Namespace+"/"+pod.Name] = pod
	p.mu.Unlock()
	p.notify(pod)
}

// An agent with a provider of one's own: a manifest in a directory runs on the provider, and
// its mirror pod in the API server shows it Running — all with the node's own credentials.
func ExampleNew() {
	// In production: clientcmd.BuildConfigFromFlags("", "/etc/vk-static/node.kubeconfig").
	client := nodeClient("edge-1")
	manifests := manifestDir("web.yaml", `apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers: [{name: web, image: nginx:1.27}]
`)
	defer os.RemoveAll(manifests)

	a, err := agent.New(agent.Config{
		NodeName: "edge-1",
		// The provider is built with what the agent gives it (agent.ProviderConfig: the Node to
		// complete, getters, event recorder, metrics registry); this one needs none of it.
		NewProvider: func(agent.ProviderConfig) (agent.Provider, error) {
			return &instantProvider{pods: map[string]*corev1.Pod{}}, nil
		},
		Client:          client,
		PodManifestPath: manifests,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _ = a.Run(ctx) }()
	defer func() {
		cancel()
		<-a.Done()
	}()

	mirror := runningPod(client, "default", "web-edge-1")
	fmt.Println(mirror.Name, mirror.Status.Phase, "owned by", mirror.OwnerReferences[0].Kind, mirror.OwnerReferences[0].Name)
	// Output: web-edge-1 Running owned by Node edge-1
}

// nodeClientset is a clientset with the identity system:node:<name>.
func nodeClient(name string) kubeclient.Interface {
	cfg, err := env.NodeConfig(name)
	if err != nil {
		panic(err)
	}
	client, err := kubeclient.New(cfg)
	if err != nil {
		panic(err)
	}
	return client
}

// manifestDir is a new directory holding one manifest.
func manifestDir(name, content string) string {
	dir, err := os.MkdirTemp("", "agent-example-")
	if err != nil {
		panic(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		panic(err)
	}
	return dir
}

// runningPod waits (30 s at most) until the pod exists and is Running.
func runningPod(client kubeclient.Interface, namespace, name string) *corev1.Pod {
	deadline := time.Now().Add(30 * time.Second)
	for {
		p, err := client.Pods(namespace).Get(context.Background(), name, metav1.GetOptions{})
		if err == nil && p.Status.Phase == corev1.PodRunning {
			return p
		}
		if time.Now().After(deadline) {
			panic(fmt.Sprintf("pod %s/%s not Running: %v", namespace, name, err))
		}
		time.Sleep(50 * time.Millisecond)
	}
}
