package lifecycle

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/provider"
)

// leftovers are what the runtime holds of a pod that the pod no longer tracks: an old
// container instance whose removal failed (startContainer keeps one dead instance per
// container), the kept containers and sandboxes of an unreadable record that the pod, created
// again, could not use (kept.go). The pod's syncs remove them, trying again after retryAfter
// until the runtime confirms each removal (NotFound counts), and the pod is not forgotten
// before (forget): a failed removal is never the last word on a container.
type leftovers struct {
	sandboxes  []string
	containers []*ContainerStatus
}

func (l *leftovers) empty() bool { return len(l.sandboxes) == 0 && len(l.containers) == 0 }

// addLeftoverLocked gives the pod an instance to remove on its next syncs, the first after
// retryAfter.
func (p *Provider) addLeftoverLocked(uid types.UID, cs *ContainerStatus) {
	st, ok := p.pods[uid]
	if !ok {
		return
	}
	st.leftovers.containers = append(st.leftovers.containers, cs)
	p.wakeLocked(uid, p.cfg.Clock.Now().Add(retryAfter))
}

// removeLeftovers removes the pod's leftovers. What could not be removed stays for a sync after
// retryAfter, and the error says what.
func (p *Provider) removeLeftovers(ctx context.Context, uid types.UID) error {
	p.mu.Lock()
	st, ok := p.pods[uid]
	if !ok || st.leftovers.empty() {
		p.mu.Unlock()
		return nil
	}
	left := st.leftovers
	st.leftovers = leftovers{}
	p.mu.Unlock()

	var failed leftovers
	var errs []error
	for _, cs := range left.containers {
		if err := p.removeInstance(ctx, cs); err != nil {
			failed.containers = append(failed.containers, cs)
			errs = append(errs, err)
		}
	}
	for _, id := range left.sandboxes {
		if err := p.dropSandbox(ctx, id); err != nil {
			failed.sandboxes = append(failed.sandboxes, id)
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	err := errors.Join(errs...)
	klog.FromContext(ctx).Error(err, "Removing what the runtime holds of the pod that the pod no longer tracks; tried again", "retryIn", retryAfter)
	p.mu.Lock()
	if st, ok := p.pods[uid]; ok {
		st.leftovers.containers = append(st.leftovers.containers, failed.containers...)
		st.leftovers.sandboxes = append(st.leftovers.sandboxes, failed.sandboxes...)
		p.wakeLocked(uid, p.cfg.Clock.Now().Add(retryAfter))
	}
	p.mu.Unlock()
	return err
}

// removeInstance stops a container instance if it runs and removes it; NotFound counts as
// removed.
func (p *Provider) removeInstance(ctx context.Context, cs *ContainerStatus) error {
	if cs.State == ContainerRunning {
		if err := p.rt.StopContainer(ctx, cs.ID, minimumGrace); err != nil && !provider.IsNotFound(err) {
			return fmt.Errorf("stopping container %s: %w", cs.ID, err)
		}
	}
	if err := p.removeContainer(ctx, cs); err != nil {
		return fmt.Errorf("removing container %s: %w", cs.ID, err)
	}
	return nil
}

// dropSandbox stops and removes a sandbox; NotFound counts as removed.
func (p *Provider) dropSandbox(ctx context.Context, id string) error {
	if err := p.rt.StopSandbox(ctx, id); err != nil && !provider.IsNotFound(err) {
		return fmt.Errorf("stopping sandbox %s: %w", id, err)
	}
	if err := p.rt.RemoveSandbox(ctx, id); err != nil && !provider.IsNotFound(err) {
		return fmt.Errorf("removing sandbox %s: %w", id, err)
	}
	return nil
}
