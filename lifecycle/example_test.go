package lifecycle

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/vk-static/vk-static/agent"
)

// A runtime of one's own under the lifecycle, in an agent: the runtime only creates, starts and
// stops what it runs (here the package's test fake; yours would drive containers, VMs or
// sandboxes), and the lifecycle does the rest — restarts, probes, hooks, volumes, status, events —
// as it does for the process and CRI runtimes.
func ExampleNewProvider() {
	root, _ := os.MkdirTemp("", "lifecycle-example-")
	defer os.RemoveAll(root)
	manifests := filepath.Join(root, "manifests")
	_ = os.Mkdir(manifests, 0o755)
	_ = os.WriteFile(filepath.Join(manifests, "web.yaml"), []byte(`apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers: [{name: web, image: web, command: [serve]}]
`), 0o644)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, err := agent.New(agent.Config{
		NodeName:        "edge-1",
		PodManifestPath: manifests,
		NewProvider: NewProvider(ctx, Config{
			Runtime:     newFakeRuntime(clock.RealClock{}), // your Runtime
			RuntimeName: "mine",                            // container IDs are mine://<id>
			RootDir:     filepath.Join(root, "state"),
		}),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	go func() { _ = a.Run(ctx) }()
	defer func() {
		cancel()
		<-a.Done() // every part, the provider included, has stopped
	}()

	pod := runningPod(ctx, a.Provider(), "default", "web-edge-1")
	fmt.Println(pod.Name, pod.Status.Phase, pod.Status.ContainerStatuses[0].ContainerID[:len("mine://")])
	// Output: web-edge-1 Running mine://
}

// runningPod waits (30 s at most) until the provider runs the pod.
func runningPod(ctx context.Context, p agent.Provider, namespace, name string) *corev1.Pod {
	deadline := time.Now().Add(30 * time.Second)
	for {
		pod, err := p.GetPod(ctx, namespace, name)
		if err == nil && pod.Status.Phase == corev1.PodRunning {
			return pod
		}
		if time.Now().After(deadline) {
			panic(fmt.Sprintf("pod %s/%s not Running: %v", namespace, name, err))
		}
		time.Sleep(10 * time.Millisecond)
	}
}
