package lifecycle

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/backoff"
	"github.com/vk-static/vk-static/lifecycle/volume"
	"github.com/vk-static/vk-static/podutil"
)

// podState is what the lifecycle knows of one pod: the spec it was given and its containers as
// the runtime last reported them. It is guarded by the Provider's mutex and replaced, not
// mutated, where a snapshot is handed out (containers are copied by snapshot).
type podState struct {
	pod *corev1.Pod
	// recordPending: CreatePod is writing the pod's first record; the pod has no worker until
	// it is on disk, and CreatePod starts it then (not Run).
	recordPending bool
	// startTime is when the lifecycle accepted the pod (status.startTime); kept across restarts.
	startTime time.Time
	// refused is why the pod may not run (Admit, an invalid spec): it is Failed with this
	// message and nothing is ever started.
	refused string
	// refusedReason is the refusal's reason (status reason, event): the kubelet's, or
	// NotAdmitted.
	refusedReason string
	// sandboxID is the pod's sandbox, "" until created; podIPs are its addresses as the
	// runtime reported them, empty for a pod on the host's network (it has the node's).
	sandboxID string
	podIPs    []string
	// containers are the pod's containers by name, init and sidecar containers included.
	containers map[string]*containerRecord
	// waiting holds, by container name, why a container that should run has not been created:
	// a configuration error (a missing secret key), a volume not ready. Cleared on success.
	waiting map[string]waitingReason
	// imagePulls holds, by image, the pull back-off of images that failed to pull for this pod
	// (nil until one did).
	imagePulls map[string]*pullBackoff
	// volumesReady is set once every volume exists; volumes are their host paths by name, and
	// volumesRefreshed when the API-object volumes were last brought up to date.
	volumesReady     bool
	volumes          volume.Volumes
	volumesRefreshed time.Time
	// What moves the pod out of podSyncing (workState): a refusal (above), a deletion, the
	// active deadline or an eviction; stopped moves it on to podTerminated.
	//
	// deleting is set by DeletePod: the pod is being stopped for good, within grace.
	deleting bool
	grace    time.Duration
	// deadlineExceeded is set when activeDeadlineSeconds has passed.
	deadlineExceeded bool
	// evicted is the eviction message of a pod the eviction manager evicted, or a critical pod
	// preempted ([Provider.evictPod]): it is stopped within evictGrace, its volumes are removed, and it
	// stays Failed with evictedReason (Evicted when empty, or Preempting); evictedDone, when
	// set, is closed once that is done.
	evicted       string
	evictedReason string
	evictGrace    time.Duration
	evictedDone   chan struct{}
	// stopped is set once every container has been stopped after deleting, the deadline or an
	// eviction.
	stopped bool
	// cleanup is the retry back-off of a stopped pod whose containers, sandbox, volumes or
	// directory could not all be removed ([Provider.cleanupFailed]); nil until a cleanup failed.
	cleanup *backoff.Delays
	// leftovers are instances the runtime holds that the pod no longer tracks, which its syncs
	// remove until the runtime confirms ([leftovers]).
	leftovers leftovers
	// status is the last status built and reported; nil before the first.
	status *corev1.PodStatus
	// resize is the pod's in-place resize: its containers' allocated and actuated resources
	// and its conditions ([podResize]).
	resize podResize
}

// podWorkState is where a pod is in its life in the lifecycle, the kubelet's pod worker states
// (SyncPod, TerminatingPod, TerminatedPod in pkg/kubelet/pod_workers.go). It is read from the
// facts podState records, which are kept because each also says why (the status's reason, the
// grace, whether the pod is forgotten at the end):
//
//	podSyncing ──deleted, past its active deadline, evicted──► podTerminating ──stopped──► podTerminated
//	refused by admission: podTerminated from the start (nothing ever ran); deleted, it is stopped
//	(nothing to stop) and forgotten like any other
//
// A deleted pod is forgotten once terminated and cleaned up ([Provider.forget]); any other
// terminated pod stays, Failed or Succeeded, until it is deleted.
type podWorkState int

const (
	// podSyncing: containers are started, restarted and probed as the plan says (planPod).
	podSyncing podWorkState = iota
	// podTerminating: the pod is to stop and some containers may still run (stopPod).
	podTerminating
	// podTerminated: nothing runs and nothing starts again; the status is terminal.
	podTerminated
)

func (st *podState) workState() podWorkState {
	switch {
	case st.stopped || (st.refused != "" && !st.deleting):
		return podTerminated
	case st.deleting || st.deadlineExceeded || st.evicted != "":
		return podTerminating
	}
	return podSyncing
}

// stopGrace is how long the pod's containers get to stop: a deletion's grace period, else an
// eviction's, else (past its active deadline) the pod's own.
func (st *podState) stopGrace() time.Duration {
	switch {
	case st.deleting:
		return st.grace
	case st.evicted != "":
		return st.evictGrace
	}
	return podutil.GracePeriod(st.pod)
}

// waitingReason is a container's Waiting reason and message; final is set when the spec can
// never be run as written (no command), so it is not tried again.
type waitingReason struct {
	reason, message string
	final           bool
}

// containerRecord is one container name of a pod: its current instance, the one before it, and
// its restart back-off.
type containerRecord struct {
	// current is the newest instance; nil before the first was created.
	current *ContainerStatus
	// previous is the instance before current (lastState, logs --previous); nil if none.
	previous *ContainerStatus
	// restarts counts instances created after the first (status restartCount).
	restarts int32
	// backoff is the delay between the exit of current and its restart (0: at once).
	backoff time.Duration
	// started is whether the startup probe (if any) has passed for current; ready whether the
	// readiness probe has (true without one, once started).
	started bool
	ready   bool
	// everStarted is set once any instance has started as the container status's started
	// means it — running and past its startup probe, if it has one: a sidecar then no longer
	// holds up the init and main containers after it. The kubelet starts what follows a sidecar
	// only once its startup probe has passed (computeInitContainerActions), so a sidecar that is
	// merely running, its startup probe still failing, holds them up.
	everStarted bool
	// unhealthy is set when a liveness or startup probe failed for current: it is killed and
	// restarted as the restart policy says.
	unhealthy bool
	// hookFailed is set when postStart failed for current: it is killed.
	hookFailed bool
	// exited is closed when current is seen to have exited (log followers end on it).
	exited chan struct{}
	// startSeen is set by current's Started event; watched once current has also been seen
	// running. A watched instance's exit comes as an event (NotifyContainers' promise), so a
	// sync need not ask the runtime about it: its status stays what was last read until then.
	startSeen, watched bool
	// resizeRestart is set when current is stopped for a resize its resizePolicy restarts it
	// for ([resizeAction]): the next instance starts at once, whatever the restart policy.
	resizeRestart bool
}

func (r *containerRecord) running() bool {
	return r != nil && r.current != nil && r.current.State == ContainerRunning
}

func (r *containerRecord) hasExited() bool {
	return r != nil && r.current != nil && r.current.State == ContainerExited
}

// succeeded reports whether current exited with code 0.
func (r *containerRecord) succeeded() bool {
	return r.hasExited() && r.current.ExitCode == 0
}
