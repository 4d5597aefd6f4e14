package cri

import (
	"context"
	"net"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	critesting "k8s.io/cri-api/pkg/apis/testing"
)

// resizeCRI is a CRI runtime server that records the UpdateContainerResources calls it gets.
type resizeCRI struct {
	runtimeapi.UnimplementedRuntimeServiceServer
	mu      sync.Mutex
	updates []*runtimeapi.UpdateContainerResourcesRequest
}

func (f *resizeCRI) Version(context.Context, *runtimeapi.VersionRequest) (*runtimeapi.VersionResponse, error) {
	return &runtimeapi.VersionResponse{Version: "0.1.0", RuntimeName: "fake", RuntimeVersion: "1", RuntimeApiVersion: "v1"}, nil
}

func (f *resizeCRI) UpdateContainerResources(_ context.Context, req *runtimeapi.UpdateContainerResourcesRequest) (*runtimeapi.UpdateContainerResourcesResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.updates = append(f.updates, req)
	return &runtimeapi.UpdateContainerResourcesResponse{}, nil
}

// A resize reaches the CRI runtime as UpdateContainerResources of the running container, with
// the Linux resources the new requests and limits map to, as the kubelet sends them.
func TestUpdateContainerResourcesCallsTheRuntime(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "cri.sock")
	l, err := net.Listen("unix", sock)
	require.NoError(t, err)
	f := &resizeCRI{}
	srv := grpc.NewServer()
	runtimeapi.RegisterRuntimeServiceServer(srv, f)
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)
	rs, err := newRemoteRuntime("unix://"+sock, time.Minute)
	require.NoError(t, err)
	r, err := New(context.Background(), Config{RuntimeService: rs, ImageService: critesting.NewFakeImageService()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close() })

	l2 := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("64Mi")}
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: l2, Limits: l2}}}}}
	require.NoError(t, r.UpdateContainerResources(context.Background(), "container-1", pod, &pod.Spec.Containers[0]))

	f.mu.Lock()
	defer f.mu.Unlock()
	require.Len(t, f.updates, 1)
	assert.Equal(t, "container-1", f.updates[0].GetContainerId())
	got := f.updates[0].GetLinux()
	assert.Equal(t, []int64{512, 100000, 50000, 64 << 20}, []int64{got.GetCpuShares(), got.GetCpuPeriod(), got.GetCpuQuota(), got.GetMemoryLimitInBytes()})
}
