package lifecycle

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vk-static/vk-static/podstatus"
	"github.com/vk-static/vk-static/podutil"
)

// admissionNode is a Node of 1 CPU, 1Gi and room for pods pods, labelled disk=hdd.
func admissionNode(pods int64) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "node-a", Labels: map[string]string{"disk": "hdd"}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("1"),
			corev1.ResourceMemory: resource.MustParse("1Gi"),
			corev1.ResourcePods:   *resource.NewQuantity(pods, resource.DecimalSI),
		}},
	}
}

// cpuPod is an API pod whose container requests cpu.
func cpuPod(uid, cpu string) *corev1.Pod {
	p := testPod(uid, corev1.RestartPolicyAlways, ctr("app", "sleep", "1000"))
	p.Annotations = map[string]string{podutil.ConfigSourceAnnotationKey: podutil.APIServerSource}
	if cpu != "" {
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
	}
	return p
}

func (h *harness) admitOn(node *corev1.Node) {
	h.stop()
	h.configure = func(c *Config) { c.Node = func() *corev1.Node { return node } }
	h.start()
}

func running(s *corev1.PodStatus) bool { return s.Phase == corev1.PodRunning }
func failed(s *corev1.PodStatus) bool  { return s.Phase == corev1.PodFailed }

// A pod that does not fit the node is refused as the kubelet refuses it, with its reason and
// message, an event, and nothing started: too much cpu, a node selector the node does not
// match, one pod more than the node has room for. A restarted agent keeps the pods it admitted.
func TestNodeAdmissionRefusesWhatDoesNotFit(t *testing.T) {
	h := newHarness(t)
	h.admitOn(admissionNode(2))
	ctx := context.Background()

	first := cpuPod("first", "600m")
	require.NoError(t, h.p.CreatePod(ctx, first))
	h.eventually(first.UID, "Running", running)

	for _, tc := range []struct {
		pod             *corev1.Pod
		reason, message string
	}{
		{cpuPod("big", "600m"), "OutOfcpu", "Node didn't have enough resource: cpu, requested: 600, used: 600, capacity: 1000"},
		{func() *corev1.Pod {
			p := cpuPod("ssd", "")
			p.Spec.NodeSelector = map[string]string{"disk": "ssd"}
			return p
		}(), "NodeAffinity", "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector"},
	} {
		require.NoError(t, h.p.CreatePod(ctx, tc.pod))
		h.eventually(tc.pod.UID, "refused", failed)
		s := h.status(tc.pod.UID)
		assert.Equal(t, tc.reason, s.Reason)
		assert.Equal(t, "Pod was rejected: "+tc.message, s.Message)
		assert.Contains(t, strings.Join(h.drainEvents(), "\n"), "Warning "+tc.reason+" "+tc.message)
	}
	second := cpuPod("second", "")
	require.NoError(t, h.p.CreatePod(ctx, second))
	h.eventually(second.UID, "Running", running)
	third := cpuPod("third", "")
	require.NoError(t, h.p.CreatePod(ctx, third))
	h.eventually(third.UID, "refused", failed)
	assert.Equal(t, "OutOfpods", h.status(third.UID).Reason)
	assert.Equal(t, "Pod was rejected: Node didn't have enough resource: pods, requested: 1, used: 2, capacity: 2", h.status(third.UID).Message)
	for _, c := range h.rt.calls() {
		assert.NotContains(t, c, "p-big", "nothing of a refused pod starts")
	}

	// The node shrinks while the agent is stopped: the pods it admitted are not admitted again.
	h.admitOn(admissionNode(1))
	for _, p := range []*corev1.Pod{first, second} {
		require.NoError(t, h.p.CreatePod(ctx, p))
		h.eventually(p.UID, "still Running after a restart", running)
	}
}

// A static pod that does not fit preempts what it needs of the API pods, as the kubelet's
// critical pod admission: the BestEffort pod rather than the Burstable one when that is
// enough, stopped and Failed with reason Preempting; the static pod then runs.
func TestCriticalPodPreempts(t *testing.T) {
	h := newHarness(t)
	h.admitOn(admissionNode(2))
	ctx := context.Background()
	burstable, bestEffort := cpuPod("burstable", "500m"), cpuPod("besteffort", "")
	for _, p := range []*corev1.Pod{burstable, bestEffort} {
		require.NoError(t, h.p.CreatePod(ctx, p))
		h.eventually(p.UID, "Running", running)
	}

	static := cpuPod("static", "400m")
	static.Annotations[podutil.ConfigSourceAnnotationKey] = podutil.FileSource
	require.NoError(t, h.p.CreatePod(ctx, static), "it fits on cpu; the node is out of pods")
	h.eventually(static.UID, "Running", running)

	h.eventually(bestEffort.UID, "preempted", failed)
	s := h.status(bestEffort.UID)
	assert.Equal(t, "Preempting", s.Reason)
	assert.Equal(t, "Preempted in order to admit critical pod", s.Message)
	c, ok := podstatus.Find(s.Conditions, corev1.DisruptionTarget)
	require.True(t, ok)
	assert.Equal(t, "Pod was preempted by Kubelet to accommodate a critical pod.", c.Message)
	assert.Equal(t, corev1.PodRunning, h.status(burstable.UID).Phase, "one pod freed is enough")
	assert.Contains(t, strings.Join(h.drainEvents(), "\n"), "Warning Preempting Preempted in order to admit critical pod")

	// A static pod with no pod it may preempt is refused, and the others go on.
	other := cpuPod("other-static", "2")
	other.Annotations[podutil.ConfigSourceAnnotationKey] = podutil.FileSource
	require.NoError(t, h.p.CreatePod(ctx, other))
	h.eventually(other.UID, "refused", failed)
	assert.Equal(t, "UnexpectedAdmissionError", h.status(other.UID).Reason)
	assert.Contains(t, h.status(other.UID).Message, "no set of running pods found to reclaim resources")
	assert.Equal(t, corev1.PodRunning, h.status(static.UID).Phase)
	assert.Equal(t, corev1.PodRunning, h.status(burstable.UID).Phase)
}
