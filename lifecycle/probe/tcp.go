package probe

import (
	"context"
	"net"
	"strconv"
	"time"

	"k8s.io/klog/v2"
)

// tcpProbe passes when a TCP connection to host:port opens within timeout; the dial error is the
// failure's message, as the kubelet's.
func tcpProbe(ctx context.Context, host string, port int, timeout time.Duration) (outcome, string, error) {
	d := newDialer()
	d.Timeout = timeout
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return outcomeFailure, err.Error(), nil
	}
	if err := conn.Close(); err != nil {
		klog.FromContext(ctx).V(4).Info("Closing a TCP probe's connection failed", "err", err)
	}
	return outcomeSuccess, "", nil
}
