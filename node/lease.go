package node

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// The Lease is the node's cheap heartbeat (the kubelet's node lease): a coordination.k8s.io/v1
// Lease in kube-node-lease named after the node, holder the node, renewed every renew interval
// while the provider's Ping succeeds, and owned by the Node so it goes away with it.

// leaseLoop renews the lease at every renew interval while the provider is healthy; a failed
// renewal is retried with backoff, and a recovered Ping renews at once.
func (c *NodeController) leaseLoop(ctx context.Context) {
	logger := klog.FromContext(ctx)
	ticker := c.clock.NewTicker(c.leaseRenewInterval)
	defer ticker.Stop()
	retry := newRetryTimer(c.clock)
	var retryC <-chan time.Time
	var lease *coordinationv1.Lease // the last one written; nil: read it first
	for {
		if c.healthy() {
			var err error
			lease, err = c.renewLease(ctx, lease)
			switch {
			case err == nil:
				retryC = nil
				retry.reset()
			case ctx.Err() != nil:
				return
			default:
				var delay time.Duration
				retryC, delay = retry.after()
				logger.Error(err, "Renewing the node lease failed; retrying", "delay", delay)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C():
		case <-c.pingRecovered:
		case <-retryC:
		}
	}
}

// renewLease writes the lease with renewTime now, creating it if it does not exist, and
// returns what the server stored (nil after a failure, so the next try reads it again).
func (c *NodeController) renewLease(ctx context.Context, last *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	if last == nil {
		got, err := c.leases.Get(ctx, c.name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			created, err := c.leases.Create(ctx, c.leaseFor(nil), metav1.CreateOptions{})
			if err != nil {
				return nil, fmt.Errorf("create lease %s: %w", c.name, err)
			}
			return created, nil
		case err != nil:
			return nil, fmt.Errorf("get lease %s: %w", c.name, err)
		}
		last = got
	}
	updated, err := c.leases.Update(ctx, c.leaseFor(last), metav1.UpdateOptions{})
	if err != nil {
		// A conflict or a deleted lease: read it again on the next try.
		return nil, fmt.Errorf("renew lease %s: %w", c.name, err)
	}
	return updated, nil
}

// leaseFor is base (nil: a new lease) renewed now, owned by the registered Node.
func (c *NodeController) leaseFor(base *coordinationv1.Lease) *coordinationv1.Lease {
	var l *coordinationv1.Lease
	if base == nil {
		l = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: c.name, Namespace: corev1.NamespaceNodeLease}}
	} else {
		l = base.DeepCopy()
	}
	l.Spec.HolderIdentity = ptr.To(c.name)
	l.Spec.LeaseDurationSeconds = ptr.To(c.leaseDurationSeconds)
	l.Spec.RenewTime = &metav1.MicroTime{Time: c.clock.Now()}
	if uid := c.registeredUID(); uid != "" {
		l.OwnerReferences = setNodeOwner(l.OwnerReferences, c.name, uid)
	}
	return l
}

// setNodeOwner makes the Node (name, uid) the owner in refs, replacing a reference to an
// earlier incarnation of the same Node and keeping other owners.
func setNodeOwner(refs []metav1.OwnerReference, name string, uid types.UID) []metav1.OwnerReference {
	owner := metav1.OwnerReference{APIVersion: "v1", Kind: "Node", Name: name, UID: uid}
	out := make([]metav1.OwnerReference, 0, len(refs)+1)
	for _, r := range refs {
		if r.APIVersion == "v1" && r.Kind == "Node" && r.Name == name {
			continue
		}
		out = append(out, r)
	}
	return append(out, owner)
}
