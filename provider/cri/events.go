package cri

import (
	"context"
	"maps"

	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/lifecycle"
)

// NotifyContainers reports containers that started or exited. containerd 1.6 has no CRI
// container events (GetContainerEvents is Unimplemented), so this is the kubelet's generic
// relist: the containers are listed every RelistPeriod and their states compared with the
// last listing. A failed listing (the runtime restarting) reports nothing and forgets
// nothing: the next one that answers is compared with the last that did.
func (r *Runtime) NotifyContainers(ctx context.Context, cb func(lifecycle.ContainerEvent)) {
	go r.relist(ctx, cb)
}

// containerRecord is what the relist remembers of a container.
type containerRecord struct {
	sandboxID string
	state     lifecycle.ContainerState
	labels    map[string]string
}

func (r *Runtime) relist(ctx context.Context, cb func(lifecycle.ContainerEvent)) {
	logger := klog.FromContext(ctx)
	ticker := r.cfg.Clock.NewTicker(r.cfg.RelistPeriod)
	defer ticker.Stop()
	var last map[string]containerRecord
	down := false
	for {
		list, err := r.listContainers(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			if !down {
				logger.Error(err, "Container runtime does not answer; pods keep their last known state until it does")
				down = true
			}
		case err == nil:
			if down {
				logger.Info("Container runtime answers again")
				down = false
			}
			now := make(map[string]containerRecord, len(list))
			for _, c := range list {
				now[c.GetId()] = containerRecord{sandboxID: c.GetPodSandboxId(), state: containerState(c.GetState()), labels: c.GetLabels()}
			}
			if last != nil {
				for _, ev := range relistEvents(last, now) {
					cb(ev)
				}
			}
			last = now
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C():
		}
	}
}

// relistEvents are the events between two listings, as the kubelet's generic PLEG: a
// container now running that was not is started; one now exited (or gone) that was running
// or created is exited.
func relistEvents(last, now map[string]containerRecord) []lifecycle.ContainerEvent {
	var out []lifecycle.ContainerEvent
	event := func(id string, rec containerRecord, t lifecycle.ContainerEventType) {
		out = append(out, lifecycle.ContainerEvent{ContainerID: id, SandboxID: rec.sandboxID, Type: t, Labels: ownLabels(maps.Clone(rec.labels))})
	}
	for id, rec := range now {
		old, known := last[id]
		switch {
		case rec.state == lifecycle.ContainerRunning && (!known || old.state != lifecycle.ContainerRunning):
			event(id, rec, lifecycle.ContainerStartedEvent)
		case rec.state == lifecycle.ContainerExited && (!known || old.state != lifecycle.ContainerExited):
			event(id, rec, lifecycle.ContainerExitedEvent)
		}
	}
	for id, old := range last {
		if _, ok := now[id]; !ok && old.state == lifecycle.ContainerRunning {
			event(id, old, lifecycle.ContainerExitedEvent)
		}
	}
	return out
}
