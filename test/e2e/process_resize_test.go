package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/podstatus"
	"github.com/vk-static/vk-static/test/support/cgrouptest"
	"github.com/vk-static/vk-static/test/support/podwait"
)

// In-place resize through the API server's resize subresource, as the Conformance specs do it:
// a Guaranteed pod's CPU and memory change, the process agent applies them to the running
// container's cgroup without a restart, and the status shows them (resources,
// allocatedResources, observedGeneration caught up, no resize condition left). A resize that
// does not fit beside another pod is then Deferred with the kubelet's message, the container
// keeping what it has, until that pod leaves.
func TestProcessResizeInPlace(t *testing.T) {
	t.Parallel()
	root := cgrouptest.Root(t)
	a := startProcessAgent(t, "--cgroup-root", root)
	ctx := context.Background()
	ns := env.Namespace(t)
	pods := env.Admin.CoreV1().Pods(ns)
	res := func(cpu, memory string) corev1.ResourceRequirements {
		l := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
		return corev1.ResourceRequirements{Requests: l, Limits: l.DeepCopy()}
	}
	_, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "resized"}, Spec: corev1.PodSpec{
		NodeName: a.Node, TerminationGracePeriodSeconds: ptr.To[int64](1), AutomountServiceAccountToken: ptr.To(false),
		Containers: []corev1.Container{{Name: "main", Image: "busybox", Command: []string{"sleep", "1000"}, Resources: res("200m", "64Mi")}},
	}}, metav1.CreateOptions{})
	require.NoError(t, err)
	p := podwait.Until(t, env.Admin, ns, "resized", 30*time.Second, "Running", podwait.MainRunning)
	containerID := podwait.MainStatus(p).ContainerID
	dir := root + "/kubepods/pod" + string(p.UID) + "/" + strings.TrimPrefix(containerID, "process://")
	assert.Equal(t, "67108864", memoryLimit(t, dir))

	resize := func(cpu, memory string) int64 {
		t.Helper()
		patch := fmt.Sprintf(`{"spec":{"containers":[{"name":"main","resources":{"requests":{"cpu":%q,"memory":%q},"limits":{"cpu":%q,"memory":%q}}}]}}`, cpu, memory, cpu, memory)
		got, err := pods.Patch(ctx, "resized", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "resize")
		require.NoError(t, err)
		return got.Generation
	}
	gen := resize("300m", "96Mi")
	p = podwait.Until(t, env.Admin, ns, "resized", 30*time.Second, "resized", func(p *corev1.Pod) error {
		cs := podwait.MainStatus(p)
		switch {
		case p.Status.ObservedGeneration < gen:
			return fmt.Errorf("observedGeneration %d < %d", p.Status.ObservedGeneration, gen)
		case hasResizeCondition(p):
			return fmt.Errorf("resize conditions %+v", p.Status.Conditions)
		case cs == nil || cs.Resources == nil || cs.Resources.Limits.Memory().String() != "96Mi" || cs.Resources.Limits.Cpu().String() != "300m":
			return fmt.Errorf("main %s, resources %+v", podwait.Describe(cs), cs.Resources)
		}
		return nil
	})
	cs := podwait.MainStatus(p)
	assert.Equal(t, containerID, cs.ContainerID, "the same container runs on")
	assert.Zero(t, cs.RestartCount)
	assert.Equal(t, "300m", cs.AllocatedResources.Cpu().String())
	assert.Equal(t, "96Mi", cs.AllocatedResources.Memory().String())
	assert.Equal(t, "100663296", memoryLimit(t, dir), "the kernel enforces the new limit")
	waitEvent(t, ns, "resized", "ResizeCompleted", "Pod resize completed", 30*time.Second)

	// The API server refuses a resize beyond the node's allocatable; one that fits it but not
	// beside another pod waits.
	node, err := env.Admin.CoreV1().Nodes().Get(ctx, a.Node, metav1.GetOptions{})
	require.NoError(t, err)
	capacity := node.Status.Allocatable.Cpu().MilliValue()
	hog := capacity - 500
	_, err = pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "hog"}, Spec: corev1.PodSpec{
		NodeName: a.Node, TerminationGracePeriodSeconds: ptr.To[int64](1), AutomountServiceAccountToken: ptr.To(false),
		Containers: []corev1.Container{{Name: "main", Image: "busybox", Command: []string{"sleep", "1000"},
			Resources: res(fmt.Sprintf("%dm", hog), "16Mi")}},
	}}, metav1.CreateOptions{})
	require.NoError(t, err)
	podwait.Until(t, env.Admin, ns, "hog", 30*time.Second, "Running", podwait.MainRunning)
	gen = resize("800m", "96Mi")
	p = podwait.Until(t, env.Admin, ns, "resized", 30*time.Second, "Deferred", func(p *corev1.Pod) error {
		c, ok := podstatus.Find(p.Status.Conditions, corev1.PodResizePending)
		if !ok || c.Reason != corev1.PodReasonDeferred || c.ObservedGeneration != gen {
			return fmt.Errorf("conditions %+v", p.Status.Conditions)
		}
		return nil
	})
	c, _ := podstatus.Find(p.Status.Conditions, corev1.PodResizePending)
	assert.Equal(t, fmt.Sprintf("Node didn't have enough resource: cpu, requested: 800, used: %d, capacity: %d", hog, capacity), c.Message)
	assert.Equal(t, "300m", podwait.MainStatus(p).AllocatedResources.Cpu().String(), "it keeps what it had")
	waitEvent(t, ns, "resized", "ResizeDeferred", "Pod resize OutOfcpu", 30*time.Second)

	// The hog leaves: the deferred resize is allocated and applied.
	require.NoError(t, pods.Delete(ctx, "hog", metav1.DeleteOptions{}))
	podwait.Until(t, env.Admin, ns, "resized", 60*time.Second, "resized once the hog left", func(p *corev1.Pod) error {
		cs := podwait.MainStatus(p)
		if hasResizeCondition(p) || cs == nil || cs.Resources == nil || cs.Resources.Limits.Cpu().String() != "800m" {
			return fmt.Errorf("conditions %+v, main %s", p.Status.Conditions, podwait.Describe(cs))
		}
		return nil
	})

	require.NoError(t, pods.Delete(ctx, "resized", metav1.DeleteOptions{}))
	podwait.Gone(t, env.Admin, ns, "hog", 30*time.Second)
	podwait.Gone(t, env.Admin, ns, "resized", 30*time.Second)
	a.noContainerProcesses(10 * time.Second)
}

// hasResizeCondition reports whether p's status has PodResizePending or PodResizeInProgress.
func hasResizeCondition(p *corev1.Pod) bool {
	_, pending := podstatus.Find(p.Status.Conditions, corev1.PodResizePending)
	_, inProgress := podstatus.Find(p.Status.Conditions, corev1.PodResizeInProgress)
	return pending || inProgress
}

// memoryLimit is the memory limit of the cgroup p in bytes, v1's or v2's.
func memoryLimit(t *testing.T, p string) string {
	t.Helper()
	for _, file := range []string{"memory.max", "memory.limit_in_bytes"} {
		for _, mnt := range cgrouptest.Mounts() {
			if data, err := os.ReadFile(filepath.Join(mnt, p, file)); err == nil {
				return strings.TrimSpace(string(data))
			}
		}
	}
	require.Fail(t, "no memory limit", "cgroup %s", p)
	return ""
}
