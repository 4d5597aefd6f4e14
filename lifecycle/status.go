package lifecycle

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/vk-static/vk-static/podstatus"
	"github.com/vk-static/vk-static/podutil"
)

// Reasons the lifecycle reports, the kubelet's where it has one.
const (
	reasonContainerCreating = "ContainerCreating"
	reasonPodInitializing   = "PodInitializing"
	reasonCrashLoopBackOff  = "CrashLoopBackOff"
	reasonCompleted         = "Completed"
	reasonError             = "Error"
	reasonConfigError       = "CreateContainerConfigError"
	reasonNoCommand         = "NoCommand"
	reasonDeadlineExceeded  = "DeadlineExceeded"
	reasonNotAdmitted       = "NotAdmitted"
	messageDeadlineExceeded = "Pod was active on the node longer than the specified deadline"
	containerIDPrefixSep    = "://"
)

// statusInput is what podStatus needs beyond the pod's state.
type statusInput struct {
	runtimeName string // the container ID scheme, e.g. "process"
	hostIPs     []string
	podIPs      []string // podIPsLocked: empty while a pod network's sandbox has given none
	now         metav1.Time
}

// podStatus builds the pod's status from its state, as the kubelet's generateAPIPodStatus
// does: a status per container (state, last state, restart count, ready, started), the phase,
// and the conditions, whose transition times move only when they change (prev is the status
// last reported, nil for none).
func podStatus(st *podState, in statusInput) *corev1.PodStatus {
	pod := st.pod
	out := &corev1.PodStatus{QOSClass: pod.Status.QOSClass, ObservedGeneration: observedGeneration(st)}
	if !st.startTime.IsZero() {
		t := metav1.NewTime(st.startTime)
		out.StartTime = &t
	}
	out.HostIPs, out.HostIP = hostIPs(in.hostIPs)
	for _, ip := range in.podIPs {
		out.PodIPs = append(out.PodIPs, corev1.PodIP{IP: ip})
	}
	if len(out.PodIPs) > 0 {
		out.PodIP = out.PodIPs[0].IP
	}

	// The kubelet's default: every container without an instance waits with PodInitializing
	// in a pod with init containers (init containers after the one running included), else
	// with ContainerCreating.
	waitReason := reasonContainerCreating
	if len(pod.Spec.InitContainers) > 0 {
		waitReason = reasonPodInitializing
	}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		cs := containerStatus(st, c, waitReason, in)
		if !podutil.IsSidecar(c) {
			// The kubelet's: a regular init container is ready once it completed, never while
			// it runs (Initialized counts it done by this).
			t := cs.State.Terminated
			cs.Ready = t != nil && t.ExitCode == 0
		}
		out.InitContainerStatuses = append(out.InitContainerStatuses, cs)
	}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		out.ContainerStatuses = append(out.ContainerStatuses, containerStatus(st, c, waitReason, in))
	}
	out.EphemeralContainerStatuses = ephemeralStatuses(st, waitReason, in)

	out.Phase = phase(st, out)
	switch {
	case st.refused != "":
		// The kubelet's rejection (Kubelet.rejectPod).
		out.Reason, out.Message = st.refusedReason, rejectedMessagePrefix+st.refused
		if out.Reason == "" {
			out.Reason = reasonNotAdmitted // refused by an agent that kept no reason
		}
	case st.evicted != "":
		out.Reason, out.Message = st.evictionReason(), st.evicted
	case st.deadlineExceeded:
		out.Reason, out.Message = reasonDeadlineExceeded, messageDeadlineExceeded
	}
	// The kubelet's conditions (podstatus.Conditions): ready to start containers while the pod
	// has a sandbox and is not stopped; Ready reads the readiness gates' conditions from the pod
	// as UpdatePod brought it (package node keeps them).
	out.Conditions = podstatus.Conditions(st.pod, out, st.sandboxID != "" && !st.stopped, st.status, in.now)
	for i := range out.Conditions {
		// The kubelet's since v1.35 (PodObservedGenerationTracking): each condition it owns
		// says which spec it is of.
		if podstatus.IsOwned(out.Conditions[i].Type) {
			out.Conditions[i].ObservedGeneration = out.ObservedGeneration
		}
	}
	if st.evicted != "" {
		out.Conditions = append(out.Conditions, evictedCondition(st, in.now))
	}
	out.Conditions = append(out.Conditions, resizeConditions(st)...)
	return out
}

func hostIPs(ips []string) ([]corev1.HostIP, string) {
	var out []corev1.HostIP
	for _, ip := range ips {
		out = append(out, corev1.HostIP{IP: ip})
	}
	if len(ips) == 0 {
		return nil, ""
	}
	return out, ips[0]
}

// initialized reports whether every init container has done its part: exited 0, or, for a
// sidecar, started.
func initialized(st *podState) bool {
	for i := range st.pod.Spec.InitContainers {
		c := &st.pod.Spec.InitContainers[i]
		rec := st.containers[c.Name]
		if podutil.IsSidecar(c) {
			if rec == nil || !rec.everStarted {
				return false
			}
			continue
		}
		if !rec.succeeded() {
			return false
		}
	}
	return true
}

// containerStatus is c's status; waitReason is why a container with no instance yet waits.
func containerStatus(st *podState, c *corev1.Container, waitReason string, in statusInput) corev1.ContainerStatus {
	cs := corev1.ContainerStatus{Name: c.Name, Image: c.Image}
	rec := st.containers[c.Name]
	started := false
	cs.Started = &started
	if w, ok := st.waiting[c.Name]; ok && (rec == nil || rec.current == nil || rec.hasExited()) {
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: w.reason, Message: w.message}
	}
	if rec == nil || rec.current == nil {
		if cs.State.Waiting == nil {
			cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: waitReason}
		}
		return cs
	}
	cur := rec.current
	cs.Resources, cs.AllocatedResources = statusResources(st, c, rec)
	cs.RestartCount = rec.restarts
	cs.ContainerID = in.runtimeName + containerIDPrefixSep + cur.ID
	cs.ImageID = cur.ImageRef
	if rec.previous != nil {
		cs.LastTerminationState.Terminated = terminated(rec.previous, in.runtimeName)
	}
	switch cur.State {
	case ContainerCreated:
		cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reasonContainerCreating}}
	case ContainerRunning:
		cs.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(cur.StartedAt)}}
		started = rec.started
		cs.Ready = rec.ready && rec.started && !st.deleting
	case ContainerExited:
		t := terminated(cur, in.runtimeName)
		restarting := st.workState() == podSyncing && willRestart(st, c, rec)
		if restarting && in.now.Time.Before(backoffUntil(rec)) {
			// The kubelet's CrashLoopBackOff: waiting, with the exit as the last state.
			cs.LastTerminationState.Terminated = t
			cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
				Reason: reasonCrashLoopBackOff,
				Message: fmt.Sprintf("back-off %s restarting failed container=%s pod=%s_%s(%s)",
					rec.backoff, c.Name, st.pod.Name, st.pod.Namespace, st.pod.UID),
			}}
		} else if cs.State.Waiting == nil {
			cs.State = corev1.ContainerState{Terminated: t}
		} else {
			cs.LastTerminationState.Terminated = t
		}
	default:
		cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "Unknown"}}
	}
	return cs
}

func terminated(c *ContainerStatus, runtimeName string) *corev1.ContainerStateTerminated {
	reason := c.Reason
	if reason == "" {
		reason = reasonError
		if c.ExitCode == 0 {
			reason = reasonCompleted
		}
	}
	t := &corev1.ContainerStateTerminated{
		ExitCode:    c.ExitCode,
		Reason:      reason,
		Message:     c.Message,
		StartedAt:   metav1.NewTime(c.StartedAt),
		FinishedAt:  metav1.NewTime(c.FinishedAt),
		ContainerID: runtimeName + containerIDPrefixSep + c.ID,
	}
	if c.StartedAt.IsZero() {
		t.StartedAt = metav1.Time{}
	}
	return t
}

// willRestart reports whether an exited container is to be started again.
func willRestart(st *podState, c *corev1.Container, rec *containerRecord) bool {
	if isEphemeral(st.pod, c.Name) {
		return false // never restarted
	}
	for i := range st.pod.Spec.InitContainers {
		if &st.pod.Spec.InitContainers[i] != c {
			continue
		}
		if podutil.IsSidecar(c) {
			return true
		}
		return !rec.succeeded() && st.pod.Spec.RestartPolicy != corev1.RestartPolicyNever
	}
	return restarts(st.pod, c, rec)
}

// phase is the pod's phase as the kubelet's getPhase computes it, with a stopped pod (deleted,
// past its deadline) terminal by its containers' exit codes. A pod past its deadline or evicted
// is Failed once stopped: the kubelet's mergePodStatus never reports a terminal phase while
// containers may still run.
func phase(st *podState, s *corev1.PodStatus) corev1.PodPhase {
	if st.refused != "" || ((st.deadlineExceeded || st.evicted != "") && st.stopped) {
		return corev1.PodFailed
	}
	spec := &st.pod.Spec
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		rec := st.containers[c.Name]
		if !podutil.IsSidecar(c) && rec.hasExited() && !rec.succeeded() && spec.RestartPolicy == corev1.RestartPolicyNever {
			return corev1.PodFailed
		}
	}
	if st.stopped {
		for _, cs := range s.ContainerStatuses {
			if t := cs.State.Terminated; t == nil || t.ExitCode != 0 {
				return corev1.PodFailed
			}
		}
		return corev1.PodSucceeded
	}
	if !initialized(st) {
		return corev1.PodPending
	}
	var pending, running, succeeded, failed int
	for i := range spec.Containers {
		c := &spec.Containers[i]
		rec := st.containers[c.Name]
		switch {
		case rec == nil || rec.current == nil || rec.current.State == ContainerCreated:
			if rec != nil && rec.previous != nil {
				running++ // restarting
			} else {
				pending++
			}
		case rec.current.State == ContainerRunning:
			running++
		case rec.succeeded():
			if restarts(st.pod, c, rec) {
				running++
			} else {
				succeeded++
			}
		default:
			if restarts(st.pod, c, rec) {
				running++
			} else {
				failed++
			}
		}
	}
	switch {
	case pending > 0:
		return corev1.PodPending
	case running > 0:
		return corev1.PodRunning
	case failed > 0:
		return corev1.PodFailed
	case succeeded > 0:
		return corev1.PodSucceeded
	}
	return corev1.PodPending
}

// deliverStatuses hands the statuses publishLocked queued to NotifyPods' callback, from one
// goroutine, until ctx ends: in the order they were built, and coalesced per pod — a status
// built later is never overtaken by one built earlier, and a pod whose status changed twice
// before delivery is delivered once, newest. Statuses are built under p.mu but delivered
// outside it, since the callback may block. Without a callback they are dropped.
func (p *Provider) deliverStatuses(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.statuses.Ready():
		}
		items := p.statuses.Take()
		p.mu.Lock()
		notify := p.notify
		p.mu.Unlock()
		if notify == nil {
			continue
		}
		for _, it := range items {
			notify(it.Value)
		}
	}
}

func (p *Provider) statusInput(st *podState) statusInput {
	return statusInput{runtimeName: p.cfg.RuntimeName, hostIPs: p.cfg.NodeIPs, podIPs: p.podIPsLocked(st), now: metaNow(p.cfg.Clock)}
}

func metaNow(c clock.PassiveClock) metav1.Time { return metav1.NewTime(c.Now()) }
