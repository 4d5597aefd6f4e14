package cri_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/vk-static/vk-static/lifecycle"
	"github.com/vk-static/vk-static/runtime/cri"
	"github.com/vk-static/vk-static/test/support/testimage"
)

// A resize reaches containerd's running container: its memory limit, as the container's own
// cgroup shows it, changes in place, and the container runs on.
func TestUpdateContainerResourcesResizesARunningContainer(t *testing.T) {
	ctx := context.Background()
	const image = "localhost/test/cri-resize:1"
	importImage(t, image, testimage.Options{Cmd: []string{"pause"}})
	rt := newRuntime(t, cri.Config{})
	pod := testPod("resize", image)
	pod.Spec.Containers[0].Resources = corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}}
	sandboxID, sandbox := sandboxFor(t, rt, pod)
	id, _ := runContainer(t, rt, sandboxID, sandbox)
	before, err := rt.ContainerStatus(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, "67108864", memoryLimitIn(t, rt, id))

	resized := pod.DeepCopy()
	resized.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory] = resource.MustParse("96Mi")
	require.NoError(t, rt.UpdateContainerResources(ctx, id, resized, &resized.Spec.Containers[0]))
	assert.Equal(t, "100663296", memoryLimitIn(t, rt, id))
	after, err := rt.ContainerStatus(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, lifecycle.ContainerRunning, after.State)
	assert.Equal(t, before.StartedAt.Truncate(time.Second), after.StartedAt.Truncate(time.Second), "the same instance runs on")
}

// memoryLimitIn is the memory limit of container id's cgroup, read inside it (v1 or v2).
func memoryLimitIn(t *testing.T, rt *cri.Runtime, id string) string {
	t.Helper()
	for _, path := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		var aio attachIO
		if err := rt.Exec(context.Background(), id, []string{"workload", "cat", path}, &aio); err == nil {
			return strings.TrimSpace(aio.stdout.String())
		}
	}
	require.Fail(t, "no memory limit readable in the container")
	return ""
}
