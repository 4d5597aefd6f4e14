package node

import (
	"context"
	"fmt"
	"time"

	"k8s.io/utils/clock"

	"github.com/vk-static/vk-static/backoff"
	"github.com/vk-static/vk-static/kubeclient"
	"github.com/vk-static/vk-static/mirror"
)

// Defaults of the NodeController options (the kubelet's values).
const (
	// DefaultLeaseDurationSeconds is how long the Lease is valid without a renewal.
	DefaultLeaseDurationSeconds int32 = 40
	// DefaultLeaseRenewFraction: the Lease is renewed every duration × fraction (10 s of 40 s).
	DefaultLeaseRenewFraction = 0.25
	// DefaultPingInterval is how often the provider is pinged.
	DefaultPingInterval = 10 * time.Second
	// DefaultStatusUpdateInterval is how often the Node's status is computed, and written
	// without a Lease (the heartbeat); a change is written at once.
	DefaultStatusUpdateInterval = time.Minute
	// DefaultStatusReportFrequency is how often, with a Lease, a status that has not changed is
	// written (the kubelet's nodeStatusReportFrequency).
	DefaultStatusReportFrequency = 5 * time.Minute
)

// writeRetry is the back-off of a Node, status or Lease write that failed (the API server
// unreachable): retried quickly, so the node and its lease converge within seconds of the API
// server coming back.
func writeRetry() backoff.Policy {
	return backoff.Policy{Initial: 200 * time.Millisecond, Max: 5 * time.Second}
}

// NodeControllerOpt configures a NodeController.
type NodeControllerOpt func(*NodeController) error

// WithNodeEnableLeaseV1 renews a coordination.k8s.io/v1 Lease named after the node in leases
// (a client for the kube-node-lease namespace), valid for leaseDurationSeconds (0: the
// default) and renewed every quarter of it.
func WithNodeEnableLeaseV1(leases kubeclient.LeaseInterface, leaseDurationSeconds int32) NodeControllerOpt {
	if leaseDurationSeconds == 0 {
		leaseDurationSeconds = DefaultLeaseDurationSeconds
	}
	interval := time.Duration(float64(leaseDurationSeconds) * DefaultLeaseRenewFraction * float64(time.Second))
	return WithNodeEnableLeaseV1WithRenewInterval(leases, leaseDurationSeconds, interval)
}

// WithNodeEnableLeaseV1WithRenewInterval is WithNodeEnableLeaseV1 with an explicit renew
// interval, which must be shorter than the lease duration.
func WithNodeEnableLeaseV1WithRenewInterval(leases kubeclient.LeaseInterface, leaseDurationSeconds int32, interval time.Duration) NodeControllerOpt {
	return func(c *NodeController) error {
		if leases == nil {
			return fmt.Errorf("lease client is nil")
		}
		if leaseDurationSeconds == 0 {
			leaseDurationSeconds = DefaultLeaseDurationSeconds
		}
		if leaseDurationSeconds < 0 {
			return fmt.Errorf("lease duration %ds must be positive", leaseDurationSeconds)
		}
		if interval <= 0 || interval >= time.Duration(leaseDurationSeconds)*time.Second {
			return fmt.Errorf("lease renew interval %v must be positive and shorter than the lease duration %ds", interval, leaseDurationSeconds)
		}
		c.leases, c.leaseDurationSeconds, c.leaseRenewInterval = leases, leaseDurationSeconds, interval
		return nil
	}
}

// WithNodePingInterval sets how often the provider is pinged.
func WithNodePingInterval(d time.Duration) NodeControllerOpt {
	return withPositive("ping interval", d, func(c *NodeController) *time.Duration { return &c.pingInterval })
}

// WithNodePingTimeout bounds one Ping; default the ping interval.
func WithNodePingTimeout(d time.Duration) NodeControllerOpt {
	return withPositive("ping timeout", d, func(c *NodeController) *time.Duration { return &c.pingTimeout })
}

// WithNodeStatusUpdateInterval sets how often the status is computed and, without a Lease,
// written with fresh heartbeats.
func WithNodeStatusUpdateInterval(d time.Duration) NodeControllerOpt {
	return withPositive("status update interval", d, func(c *NodeController) *time.Duration { return &c.statusUpdateInterval })
}

// WithNodeStatusReportFrequency sets how often, with a Lease, a status that has not changed is
// written to refresh its heartbeats (default DefaultStatusReportFrequency); it is checked at
// every status update interval. Without a Lease it is not used.
func WithNodeStatusReportFrequency(d time.Duration) NodeControllerOpt {
	return withPositive("status report frequency", d, func(c *NodeController) *time.Duration { return &c.report.frequency })
}

// withPositive sets the duration field points at to d, which must be positive; what names the
// option in the error.
func withPositive(what string, d time.Duration, field func(*NodeController) *time.Duration) NodeControllerOpt {
	return func(c *NodeController) error {
		if d <= 0 {
			return fmt.Errorf("%s %v must be positive", what, d)
		}
		*field(c) = d
		return nil
	}
}

// WithNodeStatusMaxImages caps how many images status.images lists (the kubelet's
// nodeStatusMaxImages; default DefaultNodeStatusMaxImages): the largest n, -1 for all of them,
// 0 for none.
func WithNodeStatusMaxImages(n int32) NodeControllerOpt {
	return func(c *NodeController) error {
		if n < -1 {
			return fmt.Errorf("node status max images %d must be -1 or more", n)
		}
		c.maxImages = n
		return nil
	}
}

// WithNodeGetter reads the Node for every status update from getter (a watch's or an
// informer's cache, such as the agent's own Node watch) instead of GETting it from the API
// server, as the kubelet reads its node lister. A retry after a failed write, and an update
// the getter has no Node for, still GET it.
func WithNodeGetter(getter mirror.NodeGetter) NodeControllerOpt {
	return func(c *NodeController) error {
		if getter == nil {
			return fmt.Errorf("node getter is nil")
		}
		c.nodeGetter = getter
		return nil
	}
}

// ErrorHandler decides what a failed status update means. Returning nil retries the update once
// at once (the handler may have repaired something); returning an error stops the controller,
// and Run returns that error.
type ErrorHandler func(ctx context.Context, err error) error

// WithNodeStatusUpdateErrorHandler sets the handler of failed status updates. Without one, a
// failure is logged and retried with backoff. A deleted Node is always re-created, without
// consulting the handler.
func WithNodeStatusUpdateErrorHandler(h ErrorHandler) NodeControllerOpt {
	return func(c *NodeController) error {
		c.statusUpdateErrorHandler = h
		return nil
	}
}

// WithNodeClock sets the clock of every interval and timestamp (a fake clock in tests).
func WithNodeClock(clk clock.WithTicker) NodeControllerOpt {
	return func(c *NodeController) error {
		if clk == nil {
			return fmt.Errorf("clock is nil")
		}
		c.clock = clk
		return nil
	}
}
