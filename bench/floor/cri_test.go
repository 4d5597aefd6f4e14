package floor

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// fakeRuntime records the CRI calls the CRI floor makes; the methods it does not implement
// panic (the embedded nil interface), so a call the floor should not make fails the test.
type fakeRuntime struct {
	runtimeapi.RuntimeServiceClient
	mu    sync.Mutex
	calls []string
	// sandboxes are the configurations the sandboxes were run with, by ID.
	sandboxes map[string]*runtimeapi.PodSandboxConfig
}

func (f *fakeRuntime) record(call string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call)
}

func (f *fakeRuntime) recorded() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func (f *fakeRuntime) RunPodSandbox(_ context.Context, req *runtimeapi.RunPodSandboxRequest, _ ...grpc.CallOption) (*runtimeapi.RunPodSandboxResponse, error) {
	f.record("RunPodSandbox " + req.Config.Metadata.Name)
	f.mu.Lock()
	f.sandboxes["sb1"] = req.Config
	f.mu.Unlock()
	return &runtimeapi.RunPodSandboxResponse{PodSandboxId: "sb1"}, nil
}

func (f *fakeRuntime) CreateContainer(_ context.Context, req *runtimeapi.CreateContainerRequest, _ ...grpc.CallOption) (*runtimeapi.CreateContainerResponse, error) {
	f.record("CreateContainer " + req.PodSandboxId + " " + req.Config.Metadata.Name + " " + req.Config.Image.Image)
	return &runtimeapi.CreateContainerResponse{ContainerId: "c1"}, nil
}

func (f *fakeRuntime) StartContainer(_ context.Context, req *runtimeapi.StartContainerRequest, _ ...grpc.CallOption) (*runtimeapi.StartContainerResponse, error) {
	f.record("StartContainer " + req.ContainerId)
	return &runtimeapi.StartContainerResponse{}, nil
}

func (f *fakeRuntime) StopPodSandbox(_ context.Context, req *runtimeapi.StopPodSandboxRequest, _ ...grpc.CallOption) (*runtimeapi.StopPodSandboxResponse, error) {
	f.record("StopPodSandbox " + req.PodSandboxId)
	return &runtimeapi.StopPodSandboxResponse{}, nil
}

func (f *fakeRuntime) RemovePodSandbox(_ context.Context, req *runtimeapi.RemovePodSandboxRequest, _ ...grpc.CallOption) (*runtimeapi.RemovePodSandboxResponse, error) {
	f.record("RemovePodSandbox " + req.PodSandboxId)
	return &runtimeapi.RemovePodSandboxResponse{}, nil
}

// TestCRIAgentStartsAndRemovesAPod: a manifest becomes a sandbox, its container created and
// started, a mirror and one status patch that makes it Running with the container's ID; its
// removal becomes the mirror's DELETE and the sandbox stopped and removed.
func TestCRIAgentStartsAndRemovesAPod(t *testing.T) {
	dir := t.TempDir()
	client := fake.NewClientset()
	rt := &fakeRuntime{sandboxes: map[string]*runtimeapi.PodSandboxConfig{}}
	a := &CRIAgent{Client: client, Runtime: rt, Node: "node-a", ManifestDir: dir}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()
	require.Eventually(t, a.Ready, 10*time.Second, 10*time.Millisecond)

	hostNetwork := manifest + "  hostNetwork: true\n"
	// The floor reads a manifest once, when it appears: written in place, it could be read
	// half-written; renamed in, it appears whole.
	tmp := filepath.Join(dir, ".web.yaml.tmp")
	require.NoError(t, os.WriteFile(tmp, []byte(hostNetwork), 0o644))
	require.NoError(t, os.Rename(tmp, filepath.Join(dir, "web.yaml")))
	var pod *corev1.Pod
	require.Eventually(t, func() bool {
		p, err := client.CoreV1().Pods("ns").Get(ctx, "web-node-a", metav1.GetOptions{})
		if err != nil || p.Status.Phase != corev1.PodRunning {
			return false
		}
		pod = p
		return true
	}, 10*time.Second, 10*time.Millisecond)
	require.Len(t, pod.Status.ContainerStatuses, 1)
	assert.Equal(t, "containerd://c1", pod.Status.ContainerStatuses[0].ContainerID)
	assert.Equal(t, []string{"RunPodSandbox web-node-a", "CreateContainer sb1 c pause", "StartContainer c1"}, rt.recorded())
	rt.mu.Lock()
	assert.Equal(t, runtimeapi.NamespaceMode_NODE, rt.sandboxes["sb1"].Linux.SecurityContext.NamespaceOptions.Network, "the pod's host network")
	rt.mu.Unlock()

	require.NoError(t, os.Remove(filepath.Join(dir, "web.yaml")))
	require.Eventually(t, func() bool { return len(rt.recorded()) == 5 }, 10*time.Second, 10*time.Millisecond)
	assert.Equal(t, []string{"StopPodSandbox sb1", "RemovePodSandbox sb1"}, rt.recorded()[3:])
	_, err := client.CoreV1().Pods("ns").Get(ctx, "web-node-a", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "the mirror is deleted: %v", err)
}
