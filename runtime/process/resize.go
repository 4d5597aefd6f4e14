package process

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/lifecycle"
)

var _ lifecycle.ResourceUpdater = (*Runtime)(nil)

// UpdateContainerResources resizes a running container in place: its cgroup gets c's limits
// and its pod's cgroup pod's, as the kubelet's doPodResizeAction writes them. Without cgroups
// there is nothing to change: the limits were never enforced (the lifecycle's LimitsNotEnforced
// event said so).
//
// A pod limit that grows must grow before the container's can (the kernel holds a child to its
// parent's), and one that shrinks can only shrink once the container's has (below what the
// container uses it is refused): the pod's limits are set before the container's, where a
// refusal is expected when they shrink, and again after, where one is an error.
func (r *Runtime) UpdateContainerResources(ctx context.Context, containerID string, pod *corev1.Pod, c *corev1.Container) error {
	rec, err := r.loadContainer(containerID)
	if err != nil {
		return err
	}
	if r.cgroups == nil || len(rec.Cgroups) == 0 {
		return nil
	}
	sb, err := r.loadSandbox(rec.SandboxID)
	if err != nil {
		return err
	}
	podCgroup := len(sb.Cgroups) > 0 && r.cgroups.Exists(sb.Cgroups)
	if podCgroup {
		_ = r.cgroups.UpdatePod(sb.Cgroups, pod) // set again below, where its error counts
	}
	if err := r.cgroups.UpdateContainer(rec.Cgroups, c); err != nil {
		return fmt.Errorf("resize container %s: %w", containerID, err)
	}
	if podCgroup {
		if err := r.cgroups.UpdatePod(sb.Cgroups, pod); err != nil {
			return fmt.Errorf("resize the pod of container %s: %w", containerID, err)
		}
	}
	return nil
}
