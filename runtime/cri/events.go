package cri

import (
	"context"
	"maps"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/lifecycle"
)

// NotifyContainers reports containers that started or exited: from CRI's container events
// where the runtime has them, else — containerd 1.6's GetContainerEvents is Unimplemented, and
// when an event stream breaks — by the kubelet's generic relist: the containers are listed
// every RelistPeriod and their states compared with the last listing. A failed listing (the
// runtime restarting) reports nothing and forgets nothing: the next one that answers is
// compared with the last that did.
func (r *Runtime) NotifyContainers(ctx context.Context, cb func(lifecycle.ContainerEvent)) {
	go func() {
		streamed := r.streamEvents(ctx, cb)
		if ctx.Err() == nil {
			r.relist(ctx, cb, streamed)
		}
	}()
}

// streamEvents passes CRI container events on until the stream ends, and says whether any
// came (then the relist that follows starts from nothing known, so that it reports what
// changed meanwhile).
func (r *Runtime) streamEvents(ctx context.Context, cb func(lifecycle.ContainerEvent)) bool {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch := make(chan *runtimeapi.ContainerEventResponse)
	done := make(chan error, 1)
	go func() { done <- r.rs.GetContainerEvents(ctx, ch, nil) }()
	streamed := false
	for {
		select {
		case ev := <-ch:
			streamed = true
			if e, ok := containerEvent(ev); ok {
				cb(e)
			}
		case err := <-done:
			logger := klog.FromContext(ctx)
			if status.Code(err) == codes.Unimplemented {
				logger.V(2).Info("The container runtime has no container events: relisting", "period", r.cfg.RelistPeriod)
			} else if ctx.Err() == nil {
				logger.Info("The container runtime's event stream ended: relisting", "err", err, "period", r.cfg.RelistPeriod)
			}
			return streamed
		case <-ctx.Done():
			return streamed
		}
	}
}

// containerEvent maps a CRI container event of one of this runtime's containers.
func containerEvent(ev *runtimeapi.ContainerEventResponse) (lifecycle.ContainerEvent, bool) {
	var typ lifecycle.ContainerEventType
	switch ev.GetContainerEventType() {
	case runtimeapi.ContainerEventType_CONTAINER_STARTED_EVENT:
		typ = lifecycle.ContainerStartedEvent
	case runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT:
		typ = lifecycle.ContainerExitedEvent
	default:
		return lifecycle.ContainerEvent{}, false
	}
	for _, c := range ev.GetContainersStatuses() {
		if c.GetId() == ev.GetContainerId() && c.GetLabels()[LabelManaged] == "true" {
			return lifecycle.ContainerEvent{
				ContainerID: c.GetId(), SandboxID: ev.GetPodSandboxStatus().GetId(), Type: typ, Labels: ownLabels(c.GetLabels()),
			}, true
		}
	}
	return lifecycle.ContainerEvent{}, false
}

// containerRecord is what the relist remembers of a container.
type containerRecord struct {
	sandboxID string
	state     lifecycle.ContainerState
	labels    map[string]string
}

// relist lists every RelistPeriod until ctx ends; the first listing is the baseline unless
// fromNothing.
func (r *Runtime) relist(ctx context.Context, cb func(lifecycle.ContainerEvent), fromNothing bool) {
	logger := klog.FromContext(ctx)
	ticker := r.cfg.Clock.NewTicker(r.cfg.RelistPeriod)
	defer ticker.Stop()
	var last map[string]containerRecord
	if fromNothing {
		last = map[string]containerRecord{}
	}
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
