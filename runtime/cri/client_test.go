package cri

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// fakeCRI answers as a runtime that breaks the rules the client checks, and records the
// deadline each call came with (zero: none).
type fakeCRI struct {
	runtimeapi.UnimplementedRuntimeServiceServer
	runtimeapi.UnimplementedImageServiceServer
	deadlines map[string]time.Duration
}

func (f *fakeCRI) record(ctx context.Context, method string) {
	if d, ok := ctx.Deadline(); ok {
		f.deadlines[method] = time.Until(d)
	} else {
		f.deadlines[method] = 0
	}
}

func (f *fakeCRI) RunPodSandbox(ctx context.Context, req *runtimeapi.RunPodSandboxRequest) (*runtimeapi.RunPodSandboxResponse, error) {
	f.record(ctx, "RunPodSandbox")
	return &runtimeapi.RunPodSandboxResponse{PodSandboxId: req.GetConfig().GetMetadata().GetName()}, nil
}

func (f *fakeCRI) StopContainer(ctx context.Context, _ *runtimeapi.StopContainerRequest) (*runtimeapi.StopContainerResponse, error) {
	f.record(ctx, "StopContainer")
	return &runtimeapi.StopContainerResponse{}, nil
}

func (f *fakeCRI) Status(context.Context, *runtimeapi.StatusRequest) (*runtimeapi.StatusResponse, error) {
	return &runtimeapi.StatusResponse{Status: &runtimeapi.RuntimeStatus{Conditions: []*runtimeapi.RuntimeCondition{{Type: runtimeapi.RuntimeReady, Status: true}}}}, nil
}

func (f *fakeCRI) ContainerStatus(context.Context, *runtimeapi.ContainerStatusRequest) (*runtimeapi.ContainerStatusResponse, error) {
	return &runtimeapi.ContainerStatusResponse{Status: &runtimeapi.ContainerStatus{Id: "c", Metadata: &runtimeapi.ContainerMetadata{Name: "c"}, CreatedAt: 1, Image: &runtimeapi.ImageSpec{Image: "i"}}}, nil
}

func (f *fakeCRI) Exec(context.Context, *runtimeapi.ExecRequest) (*runtimeapi.ExecResponse, error) {
	return &runtimeapi.ExecResponse{}, nil
}

// ListContainers answers with more than gRPC's default 4 MiB limit.
func (f *fakeCRI) ListContainers(context.Context, *runtimeapi.ListContainersRequest) (*runtimeapi.ListContainersResponse, error) {
	big := strings.Repeat("x", 1<<20)
	var cs []*runtimeapi.Container
	for range 6 {
		cs = append(cs, &runtimeapi.Container{Id: "c", Labels: map[string]string{"big": big}})
	}
	return &runtimeapi.ListContainersResponse{Containers: cs}, nil
}

func (f *fakeCRI) PullImage(ctx context.Context, req *runtimeapi.PullImageRequest) (*runtimeapi.PullImageResponse, error) {
	f.record(ctx, "PullImage")
	switch req.GetImage().GetImage() {
	case "unknown":
		return nil, status.Error(codes.Unknown, "failed to resolve reference")
	case "denied":
		return nil, status.Error(codes.PermissionDenied, "denied")
	case "noref":
		return &runtimeapi.PullImageResponse{}, nil
	}
	return &runtimeapi.PullImageResponse{ImageRef: "sha256:1"}, nil
}

func (f *fakeCRI) ListImages(context.Context, *runtimeapi.ListImagesRequest) (*runtimeapi.ListImagesResponse, error) {
	return &runtimeapi.ListImagesResponse{Images: []*runtimeapi.Image{{Id: "sha256:1", Size: 1}}}, nil
}

func (f *fakeCRI) ImageStatus(context.Context, *runtimeapi.ImageStatusRequest) (*runtimeapi.ImageStatusResponse, error) {
	return &runtimeapi.ImageStatusResponse{Image: &runtimeapi.Image{Id: "sha256:1"}}, nil
}

// serveFake serves a fakeCRI on a unix socket until the test ends and returns its endpoint.
func serveFake(t *testing.T) (*fakeCRI, string) {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "cri.sock")
	l, err := net.Listen("unix", sock)
	require.NoError(t, err)
	f := &fakeCRI{deadlines: map[string]time.Duration{}}
	srv := grpc.NewServer()
	runtimeapi.RegisterRuntimeServiceServer(srv, f)
	runtimeapi.RegisterImageServiceServer(srv, f)
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)
	return f, "unix://" + sock
}

func TestRemoteRuntime(t *testing.T) {
	f, endpoint := serveFake(t)
	rs, err := newRemoteRuntime(endpoint, time.Hour)
	require.NoError(t, err)
	t.Cleanup(func() { _ = rs.Close(context.Background()) })
	ctx := t.Context()

	id, err := rs.RunPodSandbox(ctx, &runtimeapi.PodSandboxConfig{Metadata: &runtimeapi.PodSandboxMetadata{Name: "sandbox"}}, "")
	require.NoError(t, err)
	assert.Equal(t, "sandbox", id)
	assert.Greater(t, f.deadlines["RunPodSandbox"], time.Hour, "RunPodSandbox gets twice the timeout")
	_, err = rs.RunPodSandbox(ctx, &runtimeapi.PodSandboxConfig{Metadata: &runtimeapi.PodSandboxMetadata{}}, "")
	assert.ErrorContains(t, err, "PodSandboxId is not set")

	require.NoError(t, rs.StopContainer(ctx, "c", 1800))
	assert.Greater(t, f.deadlines["StopContainer"], time.Hour, "StopContainer gets the grace period on top of the timeout")

	_, err = rs.Status(ctx, false)
	assert.ErrorContains(t, err, "NetworkReady condition are not set")
	_, err = rs.ContainerStatus(ctx, "c", false)
	assert.ErrorContains(t, err, "status.ImageRef is not set")
	_, err = rs.Exec(ctx, &runtimeapi.ExecRequest{ContainerId: "c"})
	assert.ErrorContains(t, err, "URL is not set")

	cs, err := rs.ListContainers(ctx, nil)
	require.NoError(t, err, "an answer above gRPC's default 4 MiB")
	assert.Len(t, cs, 6)

	_, err = rs.Version(ctx, "v1")
	assert.Equal(t, codes.Unimplemented, status.Code(err), "the runtime's error as it is")
}

func TestRemoteImages(t *testing.T) {
	f, endpoint := serveFake(t)
	is, err := newRemoteImages(endpoint, time.Minute)
	require.NoError(t, err)
	t.Cleanup(func() { _ = is.Close(context.Background()) })
	ctx := t.Context()

	ref, err := is.PullImage(ctx, &runtimeapi.ImageSpec{Image: "ok"}, nil, nil)
	require.NoError(t, err)
	assert.Equal(t, "sha256:1", ref)
	assert.Zero(t, f.deadlines["PullImage"], "a pull has no deadline")

	_, err = is.PullImage(ctx, &runtimeapi.ImageSpec{Image: "unknown"}, nil, nil)
	assert.EqualError(t, err, "failed to resolve reference", "an Unknown error is only its message")
	_, err = is.PullImage(ctx, &runtimeapi.ImageSpec{Image: "denied"}, nil, nil)
	assert.Equal(t, codes.PermissionDenied, status.Code(err))
	_, err = is.PullImage(ctx, &runtimeapi.ImageSpec{Image: "noref"}, nil, nil)
	assert.ErrorContains(t, err, "imageRef of image")

	images, err := is.ListImages(ctx, nil)
	require.NoError(t, err)
	assert.Len(t, images, 1)
	_, err = is.ImageStatus(ctx, &runtimeapi.ImageSpec{Image: "i"}, false)
	assert.ErrorContains(t, err, "Id or size of image")
}

func TestSocketPath(t *testing.T) {
	for endpoint, want := range map[string]string{
		"unix:///run/containerd/containerd.sock": "/run/containerd/containerd.sock",
		"/run/crio/crio.sock":                    "/run/crio/crio.sock",
	} {
		got, err := socketPath(endpoint)
		require.NoError(t, err, endpoint)
		assert.Equal(t, want, got, endpoint)
	}
	for _, endpoint := range []string{"tcp://127.0.0.1:1234", "npipe:////./pipe/containerd"} {
		_, err := socketPath(endpoint)
		assert.Error(t, err, endpoint)
	}
}

// One socket, one connection: the image service on the runtime's connection, which only the
// runtime service's Close closes.
func TestRemoteImagesOnTheRuntimeConnection(t *testing.T) {
	_, endpoint := serveFake(t)
	rs, err := newRemoteRuntime(endpoint, time.Minute)
	require.NoError(t, err)
	is := rs.images()
	ctx := t.Context()
	_, err = is.ListImages(ctx, nil)
	require.NoError(t, err)
	require.NoError(t, is.Close(ctx))
	_, err = rs.ListContainers(ctx, nil)
	require.NoError(t, err, "the runtime's connection outlives the image service's Close")
	require.NoError(t, rs.Close(ctx))
	_, err = is.ListImages(ctx, nil)
	assert.Equal(t, codes.Canceled, status.Code(err), "closed with the runtime's connection")
}
