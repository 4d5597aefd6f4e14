package admission

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/podutil"
)

// node is machine1 with allocatable cpu (millicores), memory (bytes) and pods, as the
// kubelet's predicate_test makes its nodes.
func node(milliCPU, memory, pods int64) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "machine1"},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
			corev1.ResourceCPU:    *resource.NewMilliQuantity(milliCPU, resource.DecimalSI),
			corev1.ResourceMemory: *resource.NewQuantity(memory, resource.BinarySI),
			corev1.ResourcePods:   *resource.NewQuantity(pods, resource.DecimalSI),
		}},
	}
}

// requesting is a pod of one container requesting cpu (millicores) and memory (bytes).
func requesting(milliCPU, memory int64) *corev1.Pod {
	return &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{
			corev1.ResourceCPU:    *resource.NewMilliQuantity(milliCPU, resource.DecimalSI),
			corev1.ResourceMemory: *resource.NewQuantity(memory, resource.BinarySI),
		},
	}}}}}
}

func withPorts(ports ...corev1.ContainerPort) *corev1.Pod {
	return &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Ports: ports}}}}
}

func static(pod *corev1.Pod) *corev1.Pod {
	pod.Annotations = map[string]string{podutil.ConfigSourceAnnotationKey: podutil.FileSource}
	return pod
}

func tainted(n *corev1.Node, taints ...corev1.Taint) *corev1.Node {
	n.Spec.Taints = taints
	return n
}

func labelled(n *corev1.Node, labels map[string]string) *corev1.Node {
	n.Labels = labels
	return n
}

// The kubelet's TestGeneralPredicates cases, and the ones its admission adds: the pod count,
// the scalar resources, affinity terms, sidecar ports.
func TestCheck(t *testing.T) {
	requireFoo := &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "foo", Operator: corev1.NodeSelectorOpExists}}}},
	}}}
	gpu := corev1.ResourceName("example.com/gpu")
	withGPU := func(n *corev1.Node, count int64) *corev1.Node {
		n.Status.Allocatable[gpu] = *resource.NewQuantity(count, resource.DecimalSI)
		return n
	}
	requestingGPU := func(count int64) *corev1.Pod {
		p := requesting(0, 0)
		p.Spec.Containers[0].Resources.Requests[gpu] = *resource.NewQuantity(count, resource.DecimalSI)
		return p
	}
	sidecarPort := &corev1.Pod{Spec: corev1.PodSpec{InitContainers: []corev1.Container{{
		RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways),
		Ports:         []corev1.ContainerPort{{HostPort: 123}},
	}}}}
	initPort := &corev1.Pod{Spec: corev1.PodSpec{InitContainers: []corev1.Container{{Ports: []corev1.ContainerPort{{HostPort: 123}}}}}}

	for _, tc := range []struct {
		name     string
		pod      *corev1.Pod
		node     *corev1.Node
		admitted []*corev1.Pod
		want     []Failure
	}{
		{name: "a node that declares no allocatable is short of nothing",
			pod: requesting(8, 10), node: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "machine1"}}, admitted: []*corev1.Pod{requesting(5, 19)}},
		{name: "no resources/port/host requested always fits",
			pod: &corev1.Pod{}, node: node(10, 20, 32), admitted: []*corev1.Pod{requesting(9, 19)}},
		{name: "not enough cpu and memory resource",
			pod: requesting(8, 10), node: node(10, 20, 32), admitted: []*corev1.Pod{requesting(5, 19)},
			want: []Failure{
				{Resource: corev1.ResourceCPU, Requested: 8, Used: 5, Capacity: 10},
				{Resource: corev1.ResourceMemory, Requested: 10, Used: 19, Capacity: 20},
			}},
		{name: "exactly what is left fits",
			pod: requesting(5, 1), node: node(10, 20, 32), admitted: []*corev1.Pod{requesting(5, 19)}},
		{name: "too many pods",
			pod: &corev1.Pod{}, node: node(10, 20, 2), admitted: []*corev1.Pod{{}, {}},
			want: []Failure{{Resource: corev1.ResourcePods, Requested: 1, Used: 2, Capacity: 2}}},
		{name: "host not match",
			pod: &corev1.Pod{Spec: corev1.PodSpec{NodeName: "machine2"}}, node: node(10, 20, 32),
			want: []Failure{{Predicate: NodeName, Desc: descNodeName}}},
		{name: "hostport conflict",
			pod: withPorts(corev1.ContainerPort{HostPort: 123}), node: node(10, 20, 32), admitted: []*corev1.Pod{withPorts(corev1.ContainerPort{HostPort: 123})},
			want: []Failure{{Predicate: NodePorts, Desc: descNodePorts}}},
		{name: "hostport on all addresses conflicts with one address",
			pod: withPorts(corev1.ContainerPort{HostPort: 123}), node: node(10, 20, 32),
			admitted: []*corev1.Pod{withPorts(corev1.ContainerPort{HostPort: 123, HostIP: "127.0.0.1"})},
			want:     []Failure{{Predicate: NodePorts, Desc: descNodePorts}}},
		{name: "hostports on two addresses do not conflict",
			pod: withPorts(corev1.ContainerPort{HostPort: 123, HostIP: "127.0.0.2"}), node: node(10, 20, 32),
			admitted: []*corev1.Pod{withPorts(corev1.ContainerPort{HostPort: 123, HostIP: "127.0.0.1"})}},
		{name: "hostports of two protocols do not conflict",
			pod: withPorts(corev1.ContainerPort{HostPort: 123, Protocol: corev1.ProtocolUDP}), node: node(10, 20, 32),
			admitted: []*corev1.Pod{withPorts(corev1.ContainerPort{HostPort: 123})}},
		{name: "a sidecar's hostport is held",
			pod: withPorts(corev1.ContainerPort{HostPort: 123}), node: node(10, 20, 32), admitted: []*corev1.Pod{sidecarPort},
			want: []Failure{{Predicate: NodePorts, Desc: descNodePorts}}},
		{name: "an init container's hostport is not held",
			pod: withPorts(corev1.ContainerPort{HostPort: 123}), node: node(10, 20, 32), admitted: []*corev1.Pod{initPort}},
		{name: "taint/toleration match",
			pod:  &corev1.Pod{Spec: corev1.PodSpec{Tolerations: []corev1.Toleration{{Key: "foo"}, {Key: "bar"}}}},
			node: tainted(node(10, 20, 32), corev1.Taint{Key: "foo", Effect: corev1.TaintEffectNoSchedule}, corev1.Taint{Key: "bar", Effect: corev1.TaintEffectNoExecute})},
		{name: "NoSchedule taint/toleration not match",
			pod: &corev1.Pod{}, node: tainted(node(10, 20, 32), corev1.Taint{Key: "foo", Effect: corev1.TaintEffectNoSchedule})},
		{name: "NoExecute taint/toleration not match",
			pod: &corev1.Pod{}, node: tainted(node(10, 20, 32), corev1.Taint{Key: "bar", Effect: corev1.TaintEffectNoExecute}),
			want: []Failure{{Predicate: TaintToleration, Desc: descTaintToleration}}},
		{name: "PreferNoSchedule taint/toleration not match",
			pod: &corev1.Pod{}, node: tainted(node(10, 20, 32), corev1.Taint{Key: "baz", Effect: corev1.TaintEffectPreferNoSchedule})},
		{name: "static pods ignore taints",
			pod:  static(&corev1.Pod{}),
			node: tainted(node(10, 20, 32), corev1.Taint{Key: "foo", Effect: corev1.TaintEffectNoSchedule}, corev1.Taint{Key: "bar", Effect: corev1.TaintEffectNoExecute})},
		{name: "node affinity failure",
			pod: static(&corev1.Pod{Spec: corev1.PodSpec{Affinity: requireFoo}}), node: node(10, 20, 32),
			want: []Failure{{Predicate: NodeAffinity, Desc: descNodeAffinity}}},
		{name: "node affinity met",
			pod: &corev1.Pod{Spec: corev1.PodSpec{Affinity: requireFoo}}, node: labelled(node(10, 20, 32), map[string]string{"foo": ""})},
		{name: "node selector not met",
			pod: &corev1.Pod{Spec: corev1.PodSpec{NodeSelector: map[string]string{"disk": "ssd"}}}, node: labelled(node(10, 20, 32), map[string]string{"disk": "hdd"}),
			want: []Failure{{Predicate: NodeAffinity, Desc: descNodeAffinity}}},
		{name: "node selector met",
			pod: &corev1.Pod{Spec: corev1.PodSpec{NodeSelector: map[string]string{"disk": "ssd"}}}, node: labelled(node(10, 20, 32), map[string]string{"disk": "ssd"})},
		{name: "an extended resource the node does not have is not checked",
			pod: requestingGPU(1), node: node(10, 20, 32)},
		{name: "an extended resource the node has too little of",
			pod: requestingGPU(2), node: withGPU(node(10, 20, 32), 2), admitted: []*corev1.Pod{requestingGPU(1)},
			want: []Failure{{Resource: gpu, Requested: 2, Used: 1, Capacity: 2}}},
		{name: "every failure, in the kubelet's order",
			pod: func() *corev1.Pod {
				p := requesting(11, 0)
				p.Spec.NodeName, p.Spec.NodeSelector = "machine2", map[string]string{"disk": "ssd"}
				p.Spec.Containers[0].Ports = []corev1.ContainerPort{{HostPort: 123}}
				return p
			}(),
			node:     tainted(node(10, 20, 1), corev1.Taint{Key: "bar", Effect: corev1.TaintEffectNoExecute}),
			admitted: []*corev1.Pod{withPorts(corev1.ContainerPort{HostPort: 123})},
			want: []Failure{
				{Resource: corev1.ResourcePods, Requested: 1, Used: 1, Capacity: 1},
				{Resource: corev1.ResourceCPU, Requested: 11, Used: 0, Capacity: 10},
				{Predicate: NodeAffinity, Desc: descNodeAffinity},
				{Predicate: NodeName, Desc: descNodeName},
				{Predicate: NodePorts, Desc: descNodePorts},
				{Predicate: TaintToleration, Desc: descTaintToleration},
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Check(klog.Background(), tc.pod, tc.node, tc.admitted))
		})
	}
}

// The refusal's reason and message are the kubelet's, word for word.
func TestFailureReasonAndMessage(t *testing.T) {
	cpu := Failure{Resource: corev1.ResourceCPU, Requested: 1000000, Used: 100, Capacity: 2000}
	assert.Equal(t, "OutOfcpu", cpu.Reason())
	assert.Equal(t, "Node didn't have enough resource: cpu, requested: 1000000, used: 100, capacity: 2000", cpu.Message())
	assert.Equal(t, "OutOfpods", Failure{Resource: corev1.ResourcePods}.Reason())
	assert.Equal(t, "OutOfexample.com/gpu", Failure{Resource: "example.com/gpu"}.Reason())
	affinity := Failure{Predicate: NodeAffinity, Desc: descNodeAffinity}
	assert.Equal(t, "NodeAffinity", affinity.Reason())
	assert.Equal(t, "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector", affinity.Message())
}

// A pod's requests are the kubelet's: init containers against the sum of the others,
// sidecars added, the overhead added.
func TestRequests(t *testing.T) {
	pod := requesting(100, 0)
	pod.Spec.InitContainers = []corev1.Container{
		{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}}},
		{RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways), Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m")}}},
	}
	pod.Spec.Overhead = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}
	assert.EqualValues(t, 500+10, requests(pod)[corev1.ResourceCPU], "the first init container, which runs alone, asks for the most")
	pod.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("600m")
	assert.EqualValues(t, 600+50+10, requests(pod)[corev1.ResourceCPU], "the containers and the sidecar beside them")
}
