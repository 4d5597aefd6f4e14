package lifecycle

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vk-static/vk-static/lifecycle/probe"
	"github.com/vk-static/vk-static/podutil"
)

// stopPod stops every running container of the pod within its grace period (a deletion's, an
// eviction's, or the pod's own when its active deadline passed), the kubelet's order: the main containers
// together, each with its preStop hook first, then the sidecars one at a time in reverse order.
// The pod is then stopped: nothing starts again and its status is terminal.
func (p *Provider) stopPod(ctx context.Context, uid types.UID) {
	p.mu.Lock()
	st, ok := p.pods[uid]
	if !ok {
		p.mu.Unlock()
		return
	}
	grace := st.stopGrace()
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
	// Ephemeral containers stop with the main containers, as the kubelet's killContainersWithSyncResult.
	ephemerals := make([]corev1.Container, len(pod.Spec.EphemeralContainers))
	for i := range pod.Spec.EphemeralContainers {
		ephemerals[i] = corev1.Container(pod.Spec.EphemeralContainers[i].EphemeralContainerCommon)
	}
	mains = append(mains, collect(ephemerals)...)
	var sidecars, inits []victim
	for _, v := range collect(pod.Spec.InitContainers) {
		if podutil.IsSidecar(v.c) {
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
