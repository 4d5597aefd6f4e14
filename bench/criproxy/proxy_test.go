package criproxy

import (
	"context"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// fakeRuntime answers RunPodSandbox with an ID made of the request's pod name, and refuses
// StartContainer.
type fakeRuntime struct {
	runtimeapi.UnimplementedRuntimeServiceServer
}

func (fakeRuntime) RunPodSandbox(_ context.Context, req *runtimeapi.RunPodSandboxRequest) (*runtimeapi.RunPodSandboxResponse, error) {
	return &runtimeapi.RunPodSandboxResponse{PodSandboxId: "sb-" + req.GetConfig().GetMetadata().GetName()}, nil
}

func (fakeRuntime) StartContainer(context.Context, *runtimeapi.StartContainerRequest) (*runtimeapi.StartContainerResponse, error) {
	return nil, status.Error(codes.NotFound, "no such container")
}

func startFakeRuntime(t *testing.T, socket string) {
	ln, err := net.Listen("unix", socket)
	require.NoError(t, err)
	srv := grpc.NewServer()
	runtimeapi.RegisterRuntimeServiceServer(srv, fakeRuntime{})
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
}

func dial(t *testing.T, endpoint string) runtimeapi.RuntimeServiceClient {
	conn, err := grpc.NewClient("passthrough:///"+endpoint[len("unix://"):],
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", addr)
		}))
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	return runtimeapi.NewRuntimeServiceClient(conn)
}

func TestProxyForwardsAndTimesEachCall(t *testing.T) {
	dir := t.TempDir()
	runtimeSocket := filepath.Join(dir, "runtime.sock")
	startFakeRuntime(t, runtimeSocket)
	p, err := Start(filepath.Join(dir, "proxy.sock"), "unix://"+runtimeSocket)
	require.NoError(t, err)
	defer p.Close()
	c := dial(t, p.Endpoint())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// Before the window: not recorded.
	_, err = c.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: &runtimeapi.PodSandboxConfig{Metadata: &runtimeapi.PodSandboxMetadata{Name: "early"}}})
	require.NoError(t, err)
	p.Reset()

	for _, name := range []string{"a", "b"} {
		resp, err := c.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: &runtimeapi.PodSandboxConfig{Metadata: &runtimeapi.PodSandboxMetadata{Name: name}}})
		require.NoError(t, err)
		assert.Equal(t, "sb-"+name, resp.PodSandboxId, "the answer passes through unchanged")
	}
	_, err = c.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: "x"})
	assert.Equal(t, codes.NotFound, status.Code(err), "the runtime's status passes through")
	assert.Contains(t, err.Error(), "no such container")
	_, err = c.Version(ctx, &runtimeapi.VersionRequest{})
	assert.Equal(t, codes.Unimplemented, status.Code(err))

	calls := p.Calls()
	assert.Len(t, calls["RunPodSandbox"].Durations, 2)
	assert.Equal(t, 0, calls["RunPodSandbox"].Errors)
	assert.Equal(t, 1, calls["RunPodSandbox"].MaxInFlight)
	assert.Len(t, calls["StartContainer"].Durations, 1)
	assert.Equal(t, 1, calls["StartContainer"].Errors)
	assert.Equal(t, 1, calls["Version"].Errors)
}

func TestRecorderCountsCallsInFlight(t *testing.T) {
	r := newRecorder()
	now := time.Unix(0, 0)
	clock := func() time.Time { return now }
	endA := r.begin("CreateContainer", clock)
	endB := r.begin("CreateContainer", clock)
	now = now.Add(time.Second)
	endA(false)
	r.reset() // B is still in flight: it counts in the new window
	now = now.Add(time.Second)
	endB(true)
	got := r.snapshot()["CreateContainer"]
	assert.Equal(t, []time.Duration{2 * time.Second}, got.Durations)
	assert.Equal(t, 1, got.Errors)
	assert.Equal(t, 1, got.MaxInFlight)

	r.reset()
	assert.Empty(t, r.snapshot())
}

func TestStreamingMethodsAreNotTimed(t *testing.T) {
	assert.True(t, streaming("GetContainerEvents"))
	assert.True(t, streaming("StreamPodSandboxes"))
	assert.False(t, streaming("RunPodSandbox"))
}
