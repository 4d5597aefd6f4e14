package probe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2"
)

// grpcProbe asks host:port's grpc.health.v1.Health/Check about service, as the kubelet's
// pkg/probe/grpc: a plaintext connection (the kubelet has no credentials to offer a pod either),
// made and asked within timeout — the whole call, connecting included. SERVING passes ("service
// healthy"); any other answer, an error or the timeout fails, with the kubelet's messages. As the
// kubelet (which mimics grpc_health_probe), nothing here is an error: every failure is a verdict.
func grpcProbe(ctx context.Context, host string, port int, service string, timeout time.Duration) (outcome, string, error) {
	logger := klog.FromContext(ctx)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	addr := net.JoinHostPort(host, strconv.Itoa(port))
	dialer := newDialer()
	// DialContext with WithBlock, deprecated in favour of NewClient, is what the kubelet calls:
	// the connection is made before the RPC, so that a container that is not listening yet fails
	// with the kubelet's "failed to connect" message rather than the RPC's.
	conn, err := grpc.DialContext(ctx, addr, //nolint:staticcheck // as the kubelet, see above
		grpc.WithUserAgent("kube-probe/"+kubeVersion),
		grpc.WithBlock(), //nolint:staticcheck // as the kubelet, see above
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			return dialer.DialContext(ctx, "tcp", addr)
		}),
	)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			logger.V(4).Info("gRPC probe could not connect within its timeout", "addr", addr, "service", service, "timeout", timeout, "err", err)
			return outcomeFailure, fmt.Sprintf("timeout: failed to connect service %q within %v: %+v", addr, timeout, err), nil
		}
		logger.V(4).Info("gRPC probe could not connect", "addr", addr, "service", service, "err", err)
		return outcomeFailure, fmt.Sprintf("error: failed to connect service at %q: %+v", addr, err), nil
	}
	defer func() {
		if err := conn.Close(); err != nil {
			logger.V(4).Info("Closing a gRPC probe's connection failed", "err", err)
		}
	}()

	resp, err := healthpb.NewHealthClient(conn).Check(metadata.NewOutgoingContext(ctx, metadata.MD{}),
		&healthpb.HealthCheckRequest{Service: service})
	if err != nil {
		if st, ok := status.FromError(err); ok {
			switch st.Code() {
			case codes.Unimplemented:
				logger.V(4).Info("gRPC probe: the server does not implement grpc.health.v1.Health", "addr", addr, "service", service)
				return outcomeFailure, "error: this server does not implement the grpc health protocol (grpc.health.v1.Health): " + st.Message(), nil
			case codes.DeadlineExceeded:
				logger.V(4).Info("gRPC probe: the health RPC did not finish within the timeout", "addr", addr, "service", service, "timeout", timeout)
				return outcomeFailure, fmt.Sprintf("timeout: health rpc did not complete within %v", timeout), nil
			}
		}
		logger.V(4).Info("gRPC probe failed", "addr", addr, "service", service, "err", err)
		return outcomeFailure, fmt.Sprintf("error: health rpc probe failed: %+v", err), nil
	}
	if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		return outcomeFailure, fmt.Sprintf("service unhealthy (responded with %q)", resp.GetStatus().String()), nil
	}
	return outcomeSuccess, "service healthy", nil
}
