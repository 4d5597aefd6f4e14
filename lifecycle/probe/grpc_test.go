package probe

import (
	"context"
	"net"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// healthServer serves grpc.health.v1.Health on 127.0.0.1 (health.Server: "" and "app" SERVING,
// "down" NOT_SERVING, any other service unknown), and "slow", which answers only once the
// caller gives up. It returns the port.
func healthServer(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	hs := health.NewServer()
	hs.SetServingStatus("app", healthpb.HealthCheckResponse_SERVING)
	hs.SetServingStatus("down", healthpb.HealthCheckResponse_NOT_SERVING)
	srv := grpc.NewServer()
	healthpb.RegisterHealthServer(srv, &slowHealth{Server: hs, t: t})
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)
	return l.Addr().(*net.TCPAddr).Port
}

// slowHealth holds the "slow" service's Check until its caller's deadline passes, and checks the
// kubelet's User-Agent on every call.
type slowHealth struct {
	*health.Server
	t *testing.T
}

func (s *slowHealth) Check(ctx context.Context, in *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	if ua := md.Get("user-agent"); assert.NotEmpty(s.t, ua) {
		assert.Regexp(s.t, `^kube-probe/1\.36 grpc-go/`, ua[0])
	}
	if in.GetService() == "slow" {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return s.Server.Check(ctx, in)
}

func grpcSpec(port int, service *string) *corev1.Probe {
	return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: int32(port), Service: service}}}
}

func TestRunGRPC(t *testing.T) {
	port := healthServer(t)
	// A port nothing listens on: one that was just listened on and closed.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closedPort := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())

	for _, tc := range []struct {
		name    string
		port    int
		service *string
		want    Result
		msg     string
	}{
		{name: "the server's own health, SERVING", port: port, want: Success, msg: "service healthy"},
		{name: "a SERVING service", port: port, service: ptr.To("app"), want: Success, msg: "service healthy"},
		{name: "a NOT_SERVING service", port: port, service: ptr.To("down"), want: Failure,
			msg: `service unhealthy (responded with "NOT_SERVING")`},
		{name: "an unknown service", port: port, service: ptr.To("nope"), want: Failure,
			msg: "error: health rpc probe failed: rpc error: code = NotFound desc = unknown service"},
		{name: "an answer later than the timeout", port: port, service: ptr.To("slow"), want: Failure,
			msg: "timeout: health rpc did not complete within 1s"},
		{name: "nothing listening: no connection within the timeout", port: closedPort, want: Failure,
			msg: `timeout: failed to connect service "127.0.0.1:` + strconv.Itoa(closedPort) + `" within 1s: context deadline exceeded`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, msg, err := Run(t.Context(), grpcSpec(tc.port, tc.service), Target{Host: "127.0.0.1"})
			require.NoError(t, err, "every gRPC outcome is a verdict")
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.msg, msg)
		})
	}

	t.Run("the pod's address, asked when the probe runs", func(t *testing.T) {
		asked := 0
		got, msg, err := Run(t.Context(), grpcSpec(port, nil), Target{PodIP: func() string { asked++; return "127.0.0.1" }})
		require.NoError(t, err)
		assert.Equal(t, Success, got, msg)
		assert.Equal(t, 1, asked)
	})
	t.Run("no address", func(t *testing.T) {
		got, _, err := Run(t.Context(), grpcSpec(port, nil), Target{PodIP: func() string { return "" }})
		require.ErrorIs(t, err, ErrNoHost)
		assert.Equal(t, Unknown, got)
	})
	t.Run("not a health server", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		srv := grpc.NewServer() // no services at all
		go func() { _ = srv.Serve(l) }()
		t.Cleanup(srv.Stop)
		got, msg, err := Run(t.Context(), grpcSpec(l.Addr().(*net.TCPAddr).Port, nil), Target{Host: "127.0.0.1"})
		require.NoError(t, err)
		assert.Equal(t, Failure, got)
		assert.Equal(t, "error: this server does not implement the grpc health protocol (grpc.health.v1.Health): unknown service grpc.health.v1.Health", msg)
	})
}
