package cri

import (
	"context"
	"net"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/vk-static/vk-static/lifecycle"
)

// idleCRI answers New and an idle lifecycle: a version, an image filesystem, no sandboxes nor
// containers, ready.
type idleCRI struct {
	runtimeapi.UnimplementedRuntimeServiceServer
	runtimeapi.UnimplementedImageServiceServer
}

func (idleCRI) Version(context.Context, *runtimeapi.VersionRequest) (*runtimeapi.VersionResponse, error) {
	return &runtimeapi.VersionResponse{Version: "0.1.0", RuntimeName: "fake", RuntimeVersion: "1", RuntimeApiVersion: "v1"}, nil
}

func (idleCRI) ImageFsInfo(context.Context, *runtimeapi.ImageFsInfoRequest) (*runtimeapi.ImageFsInfoResponse, error) {
	return &runtimeapi.ImageFsInfoResponse{}, nil
}

func (idleCRI) ListPodSandbox(context.Context, *runtimeapi.ListPodSandboxRequest) (*runtimeapi.ListPodSandboxResponse, error) {
	return &runtimeapi.ListPodSandboxResponse{}, nil
}

func (idleCRI) ListContainers(context.Context, *runtimeapi.ListContainersRequest) (*runtimeapi.ListContainersResponse, error) {
	return &runtimeapi.ListContainersResponse{}, nil
}

func (idleCRI) Status(context.Context, *runtimeapi.StatusRequest) (*runtimeapi.StatusResponse, error) {
	return &runtimeapi.StatusResponse{Status: &runtimeapi.RuntimeStatus{Conditions: []*runtimeapi.RuntimeCondition{
		{Type: runtimeapi.RuntimeReady, Status: true}, {Type: runtimeapi.NetworkReady, Status: true},
	}}}, nil
}

// connCounter is a listener that counts the connections it accepted and those still open: the
// server closes its end once the client has closed its own.
type connCounter struct {
	net.Listener
	mu             sync.Mutex
	accepted, open int
}

func (l *connCounter) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	l.accepted++
	l.open++
	l.mu.Unlock()
	return &countedConn{Conn: c, l: l}, nil
}

func (l *connCounter) counts() (accepted, open int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.accepted, l.open
}

// allClosed waits until the listener has accepted want connections and every one is closed.
func (l *connCounter) allClosed(t *testing.T, want int, msg string) {
	t.Helper()
	require.Eventually(t, func() bool {
		accepted, open := l.counts()
		return accepted == want && open == 0
	}, 10*time.Second, 5*time.Millisecond, msg)
}

type countedConn struct {
	net.Conn
	l    *connCounter
	once sync.Once
}

func (c *countedConn) Close() error {
	c.once.Do(func() {
		c.l.mu.Lock()
		c.l.open--
		c.l.mu.Unlock()
	})
	return c.Conn.Close()
}

// serveCounted serves srv on a unix socket until the test ends and returns its endpoint and
// connection counts.
func serveCounted(t *testing.T, srv interface {
	runtimeapi.RuntimeServiceServer
	runtimeapi.ImageServiceServer
}) (string, *connCounter) {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "cri.sock")
	l, err := net.Listen("unix", sock)
	require.NoError(t, err)
	counter := &connCounter{Listener: l}
	s := grpc.NewServer()
	runtimeapi.RegisterRuntimeServiceServer(s, srv)
	runtimeapi.RegisterImageServiceServer(s, srv)
	go func() { _ = s.Serve(counter) }()
	t.Cleanup(s.Stop)
	return "unix://" + sock, counter
}

// Close closes the connections New made, once: the runtime's, and the image service's when it
// has an endpoint of its own.
func TestCloseClosesTheConnections(t *testing.T) {
	for _, tc := range []struct {
		name        string
		ownImages   bool
		connections int
	}{
		{name: "one endpoint", connections: 1},
		{name: "an image endpoint of its own", ownImages: true, connections: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			endpoint, counter := serveCounted(t, idleCRI{})
			cfg := Config{RuntimeEndpoint: endpoint}
			if tc.ownImages {
				images, imageCounter := serveCounted(t, idleCRI{})
				cfg.ImageEndpoint = images
				defer imageCounter.allClosed(t, 1, "the image service's connection closed")
			}
			r, err := New(context.Background(), cfg)
			require.NoError(t, err)
			accepted, open := counter.counts()
			require.Equal(t, 1, accepted)
			require.Equal(t, 1, open, "connected")

			require.NoError(t, r.Close())
			counter.allClosed(t, 1, "the runtime's connection closed")
			require.NoError(t, r.Close(), "closing again is nothing")
		})
	}
}

// A New that fails after connecting (here: the runtime has no Version) closes what it dialled.
func TestNewFailingClosesItsConnections(t *testing.T) {
	endpoint, counter := serveCounted(t, &fakeCRI{deadlines: map[string]time.Duration{}})
	_, err := New(context.Background(), Config{RuntimeEndpoint: endpoint})
	require.ErrorIs(t, err, ErrUnavailable)
	counter.allClosed(t, 1, "New's connection closed")
}

// The lifecycle the Runtime is given closes its connections when it is closed, run or not (the
// agent closes it after its Run, or when it fails before running it).
func TestTheLifecycleClosesTheConnections(t *testing.T) {
	for _, run := range []bool{false, true} {
		t.Run(map[bool]string{false: "built and never run", true: "run then stopped"}[run], func(t *testing.T) {
			endpoint, counter := serveCounted(t, idleCRI{})
			r, err := New(context.Background(), Config{RuntimeEndpoint: endpoint})
			require.NoError(t, err)
			p, err := lifecycle.New(context.Background(), lifecycle.Config{Runtime: r, RuntimeName: r.Name(), RootDir: t.TempDir(), NodeIPs: []string{"127.0.0.1"}})
			require.NoError(t, err)
			if run {
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() { done <- p.Run(ctx) }()
				cancel()
				require.NoError(t, <-done)
			}
			require.NoError(t, p.Close()) // Run's end leaves it to Close, as the agent does
			counter.allClosed(t, 1, "the runtime's connection closed")
		})
	}
}
