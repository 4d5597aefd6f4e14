package admission

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	schedulinghelper "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/podutil"
)

// Check returns every GeneralPredicate pod fails on node beside admitted, the pods the node
// has admitted and not yet seen terminate, in the kubelet's order; the kubelet refuses the
// pod with the first. In that order:
//   - the pod count, against allocatable pods (--max-pods);
//   - each resource the pod requests beyond what allocatable leaves after the admitted pods'
//     requests: cpu, memory, ephemeral-storage, then the scalar resources by name (an extended
//     resource the node does not have at all is not checked, as the kubelet does not);
//   - spec.nodeSelector and required node affinity against the node's labels;
//   - spec.nodeName, which must be empty or the node's;
//   - host ports an admitted pod holds (same protocol and port, on the same address or either
//     on all addresses);
//   - a NoExecute taint of the node that the pod does not tolerate (not for a static pod,
//     whose node is its administrator's).
//
// A node that declares no allocatable at all (a library user's provider that leaves it out)
// is not short of anything: the kubelet's always declares some, pods among them.
func Check(logger klog.Logger, pod *corev1.Pod, node *corev1.Node, admitted []*corev1.Pod) []Failure {
	out := fitResources(pod, node, admitted)
	if ok, err := nodeaffinity.GetRequiredNodeAffinity(pod).Match(node); !ok || err != nil {
		out = append(out, Failure{Predicate: NodeAffinity, Desc: descNodeAffinity})
	}
	if pod.Spec.NodeName != "" && pod.Spec.NodeName != node.Name {
		out = append(out, Failure{Predicate: NodeName, Desc: descNodeName})
	}
	if !fitPorts(pod, admitted) {
		out = append(out, Failure{Predicate: NodePorts, Desc: descNodePorts})
	}
	if !podutil.IsStaticPod(pod) {
		noExecute := func(t *corev1.Taint) bool { return t.Effect == corev1.TaintEffectNoExecute }
		// Comparison operators in tolerations are an alpha feature, off by default.
		if _, untolerated := schedulinghelper.FindMatchingUntoleratedTaint(logger, node.Spec.Taints, pod.Spec.Tolerations, noExecute, false); untolerated {
			out = append(out, Failure{Predicate: TaintToleration, Desc: descTaintToleration})
		}
	}
	return out
}

// fitResources is the scheduler framework's resource fit (noderesources.Fits) as the kubelet
// runs it.
func fitResources(pod *corev1.Pod, node *corev1.Node, admitted []*corev1.Pod) []Failure {
	var out []Failure
	capacity := allocatable(node)
	if len(capacity) == 0 {
		return nil
	}
	if allowed := capacity[corev1.ResourcePods]; int64(len(admitted))+1 > allowed {
		out = append(out, Failure{Resource: corev1.ResourcePods, Requested: 1, Used: int64(len(admitted)), Capacity: allowed})
	}
	want := requests(pod)
	used := amounts{}
	for _, p := range admitted {
		for name, v := range requests(p) {
			used[name] += v
		}
	}
	names := []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage}
	var scalars []corev1.ResourceName
	for name := range want {
		if !slices.Contains(names, name) {
			scalars = append(scalars, name)
		}
	}
	slices.Sort(scalars)
	for _, name := range append(names, scalars...) {
		if _, known := capacity[name]; !known && extended(name) {
			continue
		}
		if v := want[name]; v > 0 && v > capacity[name]-used[name] {
			out = append(out, Failure{Resource: name, Requested: v, Used: used[name], Capacity: capacity[name]})
		}
	}
	return out
}
