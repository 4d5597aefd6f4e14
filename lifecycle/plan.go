package lifecycle

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vk-static/vk-static/backoff"
	"github.com/vk-static/vk-static/podutil"
)

// crashLoop is the restart back-off of the kubelet: the first restart is immediate, then 10 s
// doubling to 5 min; a container that ran at least backoffReset before it exited starts over.
var crashLoop = backoff.Policy{Initial: 10 * time.Second, Max: 5 * time.Minute}

const backoffReset = 10 * time.Minute

// containerKey names a container of a pod for the crash-loop back-off (Provider.restarts).
type containerKey struct {
	uid  types.UID
	name string
}

// plan is what one sync of a pod must do, decided from its state alone (planPod) so that the
// decisions are tested without a runtime.
type plan struct {
	// start lists the containers to create and start now, in order.
	start []*corev1.Container
	// kill lists running containers to stop, with why.
	kill []killAction
	// wakeAt is when the pod must be synced again without an event (a back-off ending); zero
	// for never.
	wakeAt time.Time
	// backingOff lists the exited containers that wait out their restart back-off: each gets
	// the kubelet's BackOff event.
	backingOff []string
	// initFailed: an init container failed and the pod's restart policy is Never: the pod is
	// Failed and nothing more starts.
	initFailed bool
}

type killAction struct {
	name, reason string
}

func (p *plan) wake(at time.Time) {
	if p.wakeAt.IsZero() || at.Before(p.wakeAt) {
		p.wakeAt = at
	}
}

// planPod decides the next actions for a pod that is to run (not refused, not being stopped),
// as the kubelet's computePodActions does: init containers one at a time in order (a sidecar
// counts once it has started), then every main container; exited containers restarted as the
// restart policy says, after their back-off; containers whose liveness probe or postStart hook
// failed killed; sidecars stopped once the main containers have finished for good.
func planPod(st *podState, now time.Time) plan {
	var p plan
	pod := st.pod
	for name, rec := range st.containers {
		if rec.running() && (rec.unhealthy || rec.hookFailed) {
			reason := "Unhealthy"
			if rec.hookFailed {
				reason = "FailedPostStartHook"
			}
			p.kill = append(p.kill, killAction{name: name, reason: reason})
		}
	}

	// Ephemeral containers first, as the kubelet: they may start whatever the init
	// containers do (a debugger for a pod stuck initializing).
	p.planEphemeral(st)

	initDone := true
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		rec := st.containers[c.Name]
		if podutil.IsSidecar(c) {
			switch {
			case st.waiting[c.Name].final:
			case rec == nil || rec.current == nil:
				p.start = append(p.start, c)
			case rec.hasExited() && rec.resizeRestart:
				p.start = append(p.start, c) // stopped for a resize: at once
			case rec.hasExited():
				p.restart(c, rec, now)
			case rec.running() && rec.started:
				continue
			}
			if rec != nil && rec.everStarted {
				continue // a sidecar that started once does not hold up what follows
			}
			initDone = false
			break
		}
		if rec.succeeded() {
			continue
		}
		initDone = false
		switch {
		case st.waiting[c.Name].final:
		case rec == nil || rec.current == nil:
			p.start = append(p.start, c)
		case rec.hasExited():
			if pod.Spec.RestartPolicy == corev1.RestartPolicyNever {
				p.initFailed = true
			} else {
				p.restart(c, rec, now)
			}
		}
		break
	}
	if p.initFailed {
		p.killSidecars(st, "InitFailed")
		return p
	}
	if !initDone {
		return p
	}

	finished := true // every main container exited and will not be restarted
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		rec := st.containers[c.Name]
		switch {
		case st.waiting[c.Name].final:
			finished = false // it never runs: the pod never finishes either
		case rec == nil || rec.current == nil:
			p.start = append(p.start, c)
			finished = false
		case rec.hasExited() && rec.resizeRestart:
			p.start = append(p.start, c) // stopped for a resize: at once, whatever the policy
			finished = false
		case rec.hasExited():
			if restarts(pod, c, rec) || specChanged(c, rec) {
				p.restart(c, rec, now)
				finished = false
			}
		default:
			if rec.running() && specChanged(c, rec) {
				p.kill = append(p.kill, killAction{name: c.Name, reason: "SpecChanged"})
			}
			finished = false
		}
	}
	if finished && len(pod.Spec.Containers) > 0 {
		p.killSidecars(st, "PodCompleted")
	}
	return p
}

// restart starts c again now, or wakes when its back-off ends.
func (p *plan) restart(c *corev1.Container, rec *containerRecord, now time.Time) {
	if until := backoffUntil(rec); now.Before(until) {
		p.wake(until)
		p.backingOff = append(p.backingOff, c.Name)
		return
	}
	p.start = append(p.start, c)
}

func (p *plan) killSidecars(st *podState, reason string) {
	for i := range st.pod.Spec.InitContainers {
		c := &st.pod.Spec.InitContainers[i]
		if podutil.IsSidecar(c) && st.containers[c.Name].running() {
			p.kill = append(p.kill, killAction{name: c.Name, reason: reason})
		}
	}
}

// backoffUntil is when an exited container may start again: its exit plus its back-off, or at
// once after a long run or before the first restart.
func backoffUntil(rec *containerRecord) time.Time {
	cur := rec.current
	if rec.backoff == 0 || ranLongEnough(cur) {
		return time.Time{}
	}
	return cur.FinishedAt.Add(rec.backoff)
}

func ranLongEnough(c *ContainerStatus) bool {
	return !c.StartedAt.IsZero() && c.FinishedAt.Sub(c.StartedAt) >= backoffReset
}

// restarts reports whether an exited main container is started again under the pod's
// restart policy.
func restarts(pod *corev1.Pod, c *corev1.Container, rec *containerRecord) bool {
	switch pod.Spec.RestartPolicy {
	case corev1.RestartPolicyNever:
		return false
	case corev1.RestartPolicyOnFailure:
		return !rec.succeeded()
	}
	return true
}
