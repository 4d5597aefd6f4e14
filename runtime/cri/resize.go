package cri

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/vk-static/vk-static/lifecycle"
)

var _ lifecycle.ResourceUpdater = (*Runtime)(nil)

// UpdateContainerResources resizes a running container in place through CRI's
// UpdateContainerResources, with the Linux resources its spec maps to at creation (resources),
// as the kubelet's doPodResizeAction does. The pod's own limits are the runtime's: this runtime
// gives its sandboxes no cgroup parent of the agent's to update.
func (r *Runtime) UpdateContainerResources(ctx context.Context, containerID string, _ *corev1.Pod, c *corev1.Container) error {
	if err := r.rs.UpdateContainerResources(ctx, containerID, &runtimeapi.ContainerResources{Linux: resources(c)}); err != nil {
		return fmt.Errorf("update the resources of container %s: %w", containerID, err)
	}
	return nil
}
