package mock

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vk-static/vk-static/podstatus"
	"github.com/vk-static/vk-static/podutil"
)

// The status builders below write what the kubelet would report for a pod whose containers
// are simulated; timestamps come from the provider's clock.

// addresses sets the pod's IPs. Every pod has the same: the slices are the provider's, shared
// by every status it makes, which no one modifies (a status is read-only once handed out,
// provider.PodNotifier; GetPod copies).
func (p *Provider) addresses(st *corev1.PodStatus) {
	st.HostIP, st.HostIPs = p.cfg.InternalIP, p.hostIPs
	st.PodIP, st.PodIPs = p.cfg.PodIP, p.podIPs
}

func containerID(pod *corev1.Pod, name string) string {
	return "mock://" + string(pod.UID) + "/" + name
}

// imageIDLocked is the image's ID, "mock://" + image. Pods mostly run a few images, often one
// after another: the last ID made is returned again for the same image, one string shared by
// its pods instead of one each (~48 B a pod at api-1k).
func (p *Provider) imageIDLocked(image string) string {
	if image != p.lastImage || p.lastImageID == "" {
		p.lastImage, p.lastImageID = image, "mock://"+image
	}
	return p.lastImageID
}

// pendingStatus is a pod accepted but still creating its containers (create-delay).
func (p *Provider) pendingStatus(pod *corev1.Pod, now metav1.Time) corev1.PodStatus {
	st := corev1.PodStatus{Phase: corev1.PodPending, StartTime: &now}
	p.addresses(&st)
	for _, typ := range podstatus.Owned {
		status := corev1.ConditionFalse
		if typ == corev1.PodScheduled {
			status = corev1.ConditionTrue
		}
		podstatus.Set(&st, typ, status, "", now)
	}
	waiting := func(c *corev1.Container) corev1.ContainerStatus {
		return corev1.ContainerStatus{
			Name: c.Name, Image: c.Image,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}},
		}
	}
	for i := range pod.Spec.InitContainers {
		st.InitContainerStatuses = append(st.InitContainerStatuses, waiting(&pod.Spec.InitContainers[i]))
	}
	for i := range pod.Spec.Containers {
		st.ContainerStatuses = append(st.ContainerStatuses, waiting(&pod.Spec.Containers[i]))
	}
	return st
}

// runningStatus turns prev (nil for a new pod) into Running: init containers completed (sidecars
// running), every container running, ready and started, every condition True. Called with
// p.mu held (imageIDLocked).
func (p *Provider) runningStatus(pod *corev1.Pod, prev *corev1.PodStatus, now metav1.Time) corev1.PodStatus {
	var st corev1.PodStatus
	if prev != nil {
		// A copy: prev belongs to a pod already handed to NotifyPods, which is never changed
		// once passed on, and the conditions are set in place below.
		st.Conditions = slices.Clone(prev.Conditions)
		st.StartTime = prev.StartTime
	}
	if st.StartTime == nil {
		st.StartTime = &now
	}
	st.Phase = corev1.PodRunning
	p.addresses(&st)
	if prev == nil {
		st.Conditions = p.startedConditionsLocked(now)
	} else {
		for _, typ := range podstatus.Owned {
			podstatus.Set(&st, typ, corev1.ConditionTrue, "", now)
		}
	}
	running := func(c *corev1.Container) corev1.ContainerStatus {
		started := true
		return corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, ImageID: p.imageIDLocked(c.Image), ContainerID: containerID(pod, c.Name),
			Ready: true, Started: &started,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		}
	}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if podutil.IsSidecar(c) {
			st.InitContainerStatuses = append(st.InitContainerStatuses, running(c))
			continue
		}
		started := false
		st.InitContainerStatuses = append(st.InitContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, ImageID: p.imageIDLocked(c.Image), ContainerID: containerID(pod, c.Name),
			Ready: true, Started: &started,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 0, Reason: "Completed", StartedAt: now, FinishedAt: now, ContainerID: containerID(pod, c.Name),
			}},
		})
	}
	for i := range pod.Spec.Containers {
		st.ContainerStatuses = append(st.ContainerStatuses, running(&pod.Spec.Containers[i]))
	}
	return st
}

// startedConditionsLocked is the conditions of a pod Running from its start at now: every owned
// condition True since now, in whole seconds, as the API server keeps them and the status writer
// writes them (node's normalize). The pods started within the same second share one list (the
// last one made), 640 B a pod at api-1k, where their statuses hold it (this provider's records
// and the pod controller's copies, docs/performance.md "Live heap per pod"). Shared, it is
// never written to: a later status clones it (runningStatus), or deep-copies the status
// (terminatedStatus, copyPod), and it has no room for an append to write into.
func (p *Provider) startedConditionsLocked(now metav1.Time) []corev1.PodCondition {
	at := metav1.NewTime(now.Truncate(time.Second))
	if c := p.lastStarted; len(c) > 0 && c[0].LastTransitionTime.Equal(&at) {
		return c
	}
	conds := make([]corev1.PodCondition, len(podstatus.Owned))
	for i, typ := range podstatus.Owned {
		conds[i] = corev1.PodCondition{Type: typ, Status: corev1.ConditionTrue, LastTransitionTime: at}
	}
	p.lastStarted = conds
	return conds
}

// terminatedStatus ends every running (or still waiting) container of prev with exitCode.
// Phase is Succeeded for exit code 0, else Failed.
func terminatedStatus(prev corev1.PodStatus, exitCode int32, now metav1.Time) corev1.PodStatus {
	st := *prev.DeepCopy()
	reason, phase := "Completed", corev1.PodSucceeded
	if exitCode != 0 {
		reason, phase = "Error", corev1.PodFailed
	}
	st.Phase = phase
	end := func(cs *corev1.ContainerStatus) {
		if cs.State.Terminated != nil {
			return
		}
		startedAt := now
		if cs.State.Running != nil {
			startedAt = cs.State.Running.StartedAt
		}
		cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: exitCode, Reason: reason, StartedAt: startedAt, FinishedAt: now, ContainerID: cs.ContainerID,
		}}
		started := false
		cs.Ready, cs.Started = false, &started
	}
	for i := range st.InitContainerStatuses {
		end(&st.InitContainerStatuses[i])
	}
	for i := range st.ContainerStatuses {
		end(&st.ContainerStatuses[i])
	}
	podstatus.Set(&st, corev1.PodReadyToStartContainers, corev1.ConditionFalse, "", now)
	podstatus.Set(&st, corev1.ContainersReady, corev1.ConditionFalse, podstatus.ReasonPodCompleted, now)
	podstatus.Set(&st, corev1.PodReady, corev1.ConditionFalse, podstatus.ReasonPodCompleted, now)
	return st
}
