package lifecycle

import (
	"context"
	"os"
	"path/filepath"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/lifecycle/probe"
	"github.com/vk-static/vk-static/node"
)

// stopPod stops every running container of the pod within its grace period (a deletion's, or
// the pod's own when its active deadline passed), the kubelet's order: the main containers
// together, each with its preStop hook first, then the sidecars one at a time in reverse order.
// The pod is then stopped: nothing starts again and its status is terminal.
func (p *Provider) stopPod(ctx context.Context, uid types.UID) {
	p.mu.Lock()
	st, ok := p.pods[uid]
	if !ok {
		p.mu.Unlock()
		return
	}
	grace := st.grace
	if !st.deleting {
		grace = gracePeriod(st.pod)
	}
	deadline := p.cfg.Clock.Now().Add(grace)
	pod := st.pod
	type victim struct {
		c      *corev1.Container
		id     string
		target probe.Target
	}
	collect := func(cs []corev1.Container) []victim {
		var out []victim
		for i := range cs {
			c := &cs[i]
			if rec := st.containers[c.Name]; rec.running() || (rec != nil && rec.current != nil && rec.current.State == ContainerCreated) {
				out = append(out, victim{c: c, id: rec.current.ID, target: p.targetLocked(st, c, rec.current.ID)})
			}
		}
		return out
	}
	mains := collect(pod.Spec.Containers)
	var sidecars, inits []victim
	for _, v := range collect(pod.Spec.InitContainers) {
		if isSidecar(v.c) {
			sidecars = append(sidecars, v)
		} else {
			inits = append(inits, v)
		}
	}
	p.publishLocked(st) // not ready any more
	p.mu.Unlock()
	p.probes.RemovePod(uid)

	if n := len(mains) + len(sidecars) + len(inits); n > 0 {
		p.cfg.Recorder.Eventf(pod, corev1.EventTypeNormal, "Killing", "Stopping %d container(s) with a grace period of %s", n, grace)
	}
	var wg sync.WaitGroup
	for _, v := range append(mains, inits...) {
		wg.Go(func() { p.stopContainer(ctx, pod, v.c, v.id, v.target, deadline) })
	}
	wg.Wait()
	for i := len(sidecars) - 1; i >= 0; i-- {
		v := sidecars[i]
		p.stopContainer(ctx, pod, v.c, v.id, v.target, deadline)
	}
	if ctx.Err() != nil {
		return // the agent is stopping; the next agent finishes the job
	}
	p.refreshContainers(ctx, uid)
	p.mu.Lock()
	if st, ok := p.pods[uid]; ok {
		st.stopped = true
		p.publishLocked(st)
	}
	p.mu.Unlock()
}

// forget removes everything the pod left (its containers, sandbox, volumes, logs and state)
// once it has stopped, and the pod itself: GetPod no longer finds it.
func (p *Provider) forget(ctx context.Context, uid types.UID) {
	if ctx.Err() != nil {
		return
	}
	logger := klog.FromContext(ctx)
	p.mu.Lock()
	st, ok := p.pods[uid]
	if !ok || !st.stopped {
		p.mu.Unlock()
		return
	}
	var ids []string
	for _, rec := range st.containers {
		for _, inst := range []*ContainerStatus{rec.current, rec.previous} {
			if inst != nil {
				ids = append(ids, inst.ID)
			}
		}
	}
	sandboxID := st.sandboxID
	p.mu.Unlock()

	for _, id := range ids {
		if err := p.rt.RemoveContainer(ctx, id); err != nil && !node.IsNotFound(err) {
			logger.Error(err, "Removing a container", "containerID", id)
		}
	}
	if sandboxID != "" {
		if err := p.rt.StopSandbox(ctx, sandboxID); err != nil && !node.IsNotFound(err) {
			logger.Error(err, "Stopping the pod sandbox", "sandboxID", sandboxID)
		}
		if err := p.rt.RemoveSandbox(ctx, sandboxID); err != nil && !node.IsNotFound(err) {
			logger.Error(err, "Removing the pod sandbox", "sandboxID", sandboxID)
		}
	}
	if err := p.volumes.Teardown(ctx, uid); err != nil {
		logger.Error(err, "Removing the pod's volumes")
	}
	// pod.json goes last: an agent that dies before restores the pod and is told again to
	// delete it.
	if err := os.RemoveAll(filepath.Join(p.cfg.podsDir(), string(uid))); err != nil {
		logger.Error(err, "Removing the pod's directory")
	}
	p.mu.Lock()
	p.forgetLocked(uid)
	p.mu.Unlock()
	p.stats.forget(uid)
}
