package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/test/support/podwait"
)

// A pod bound to the node by spec.nodeName, which no scheduler checked, is admitted or refused
// by the node as the kubelet does it: a pod asking for 1000 CPUs is Failed with OutOfcpu, one
// whose nodeSelector the node does not match with NodeAffinity, and one pod more than
// --max-pods with OutOfpods; each with the kubelet's message, an event, and nothing started.
// The pods that fit run throughout.
func TestProcessAdmissionRefusesWhatDoesNotFit(t *testing.T) {
	t.Parallel()
	a := startProcessAgent(t, "--max-pods", "2")
	ctx := context.Background()
	ns := env.Namespace(t)
	pods := env.Admin.CoreV1().Pods(ns)
	create := func(name string, mutate func(*corev1.Pod)) {
		t.Helper()
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{
			NodeName: a.Node, TerminationGracePeriodSeconds: ptr.To[int64](1), AutomountServiceAccountToken: ptr.To(false),
			Containers: []corev1.Container{{Name: "main", Image: "busybox", Command: []string{"sleep", "1000"}}},
		}}
		if mutate != nil {
			mutate(p)
		}
		_, err := pods.Create(ctx, p, metav1.CreateOptions{})
		require.NoError(t, err, name)
	}
	refused := func(name, reason, message string) {
		t.Helper()
		p := podwait.Until(t, env.Admin, ns, name, 30*time.Second, "refused with "+reason, func(p *corev1.Pod) error {
			if p.Status.Phase != corev1.PodFailed {
				return fmt.Errorf("phase %q", p.Status.Phase)
			}
			return nil
		})
		assert.Equal(t, reason, p.Status.Reason, name)
		assert.Equal(t, "Pod was rejected: "+message, p.Status.Message, name)
		cs := podwait.MainStatus(p)
		assert.True(t, cs == nil || cs.ContainerID == "", "%s: a container was started: %s", name, podwait.Describe(cs))
		waitEvent(t, ns, name, reason, message, 30*time.Second)
	}

	create("huge", func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1000")}
	})
	node, err := env.Admin.CoreV1().Nodes().Get(ctx, a.Node, metav1.GetOptions{})
	require.NoError(t, err)
	refused("huge", "OutOfcpu", fmt.Sprintf("Node didn't have enough resource: cpu, requested: 1000000, used: 0, capacity: %d",
		node.Status.Allocatable.Cpu().MilliValue()))

	create("ssd", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"disktype": "ssd"} })
	refused("ssd", "NodeAffinity", "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector")

	for _, name := range []string{"one", "two"} {
		create(name, nil)
		podwait.Until(t, env.Admin, ns, name, 30*time.Second, "Running", podwait.MainRunning)
	}
	create("three", nil)
	refused("three", "OutOfpods", "Node didn't have enough resource: pods, requested: 1, used: 2, capacity: 2")

	for _, name := range []string{"one", "two"} {
		p, err := pods.Get(ctx, name, metav1.GetOptions{})
		require.NoError(t, err)
		assert.NoError(t, podwait.MainRunning(p), "%s still runs", name)
	}
	for _, name := range []string{"huge", "ssd", "one", "two", "three"} {
		require.NoError(t, pods.Delete(ctx, name, metav1.DeleteOptions{}), name)
	}
	for _, name := range []string{"huge", "ssd", "one", "two", "three"} {
		podwait.Gone(t, env.Admin, ns, name, 30*time.Second)
	}
	a.noContainerProcesses(10 * time.Second)
}
