package lifecycle

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/podstatus"
)

// Ephemeral containers (spec.ephemeralContainers, added to a running API pod through the
// ephemeralcontainers subresource, e.g. by kubectl debug) as the kubelet runs them: each is
// started once in the pod's existing sandbox, even before the pod is initialized, and never
// restarted nor killed by the pod's own lifecycle; it is stopped with the pod. Its status is in
// status.ephemeralContainerStatuses, never ready; it counts for neither the phase nor the
// conditions.

// reasonEphemeralNotSupported is the waiting reason of an ephemeral container the runtime
// cannot run.
const reasonEphemeralNotSupported = "EphemeralContainersNotSupported"

// ephemeralSpec is the ephemeral container of that name as a Container (the kubelet's
// conversion: the common fields are the same), with its index; nil if there is none.
func ephemeralSpec(pod *corev1.Pod, name string) (*corev1.Container, *corev1.EphemeralContainer, int) {
	for i := range pod.Spec.EphemeralContainers {
		ec := &pod.Spec.EphemeralContainers[i]
		if ec.Name == name {
			c := corev1.Container(ec.EphemeralContainerCommon)
			return &c, ec, i
		}
	}
	return nil, nil, -1
}

// isEphemeral reports whether name is one of pod's ephemeral containers.
func isEphemeral(pod *corev1.Pod, name string) bool {
	c, _, _ := ephemeralSpec(pod, name)
	return c != nil
}

// planEphemeral adds to p every ephemeral container that has never had an instance, as the
// kubelet's computePodActions (EphemeralContainersToStart): whatever the init containers do,
// but not in a pod that has finished (the kubelet no longer syncs a terminal pod).
func (p *plan) planEphemeral(st *podState) {
	if podstatus.IsTerminal(st.status) {
		return
	}
	for i := range st.pod.Spec.EphemeralContainers {
		name := st.pod.Spec.EphemeralContainers[i].Name
		if rec := st.containers[name]; (rec == nil || rec.current == nil) && !st.waiting[name].final {
			c := corev1.Container(st.pod.Spec.EphemeralContainers[i].EphemeralContainerCommon)
			p.start = append(p.start, &c)
		}
	}
}

// admitEphemeral checks, before the first instance of ephemeral container c is created, that
// the runtime can run it; the error is the container's final waiting message.
func (p *Provider) admitEphemeral(pod *corev1.Pod, name string) error {
	_, ec, i := ephemeralSpec(pod, name)
	if ec == nil {
		return nil
	}
	field := fmt.Sprintf("spec.ephemeralContainers[%d]", i)
	er, ok := p.rt.(EphemeralRuntime)
	if !ok {
		return fmt.Errorf("%s (%s): the %s provider does not run ephemeral containers", field, name, p.cfg.RuntimeName)
	}
	return er.AdmitEphemeral(pod, ec, field)
}

// ephemeralTarget is the ID of the current instance of ephemeral container c's
// targetContainerName, whose process namespace it joins (CRI: NamespaceMode TARGET); "" when
// it names none. A target with no instance yet is a configuration error tried again, as the
// kubelet's getTargetID.
func ephemeralTarget(st *podState, name string) (string, error) {
	_, ec, _ := ephemeralSpec(st.pod, name)
	if ec == nil || ec.TargetContainerName == "" {
		return "", nil
	}
	rec := st.containers[ec.TargetContainerName]
	if rec == nil || rec.current == nil {
		return "", &configError{reason: reasonConfigError, retry: true,
			err: fmt.Errorf("unable to find target container %v", ec.TargetContainerName)}
	}
	return rec.current.ID, nil
}

// ephemeralStatuses are the statuses of pod's ephemeral containers, as the kubelet's
// convertToAPIContainerStatuses for them: never ready, never restarted.
func ephemeralStatuses(st *podState, waitReason string, in statusInput) []corev1.ContainerStatus {
	var out []corev1.ContainerStatus
	for i := range st.pod.Spec.EphemeralContainers {
		c := corev1.Container(st.pod.Spec.EphemeralContainers[i].EphemeralContainerCommon)
		cs := containerStatus(st, &c, waitReason, in)
		cs.Ready = false
		out = append(out, cs)
	}
	return out
}
