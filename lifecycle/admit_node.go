package lifecycle

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/eviction"
	"github.com/vk-static/vk-static/lifecycle/admission"
	"github.com/vk-static/vk-static/podstatus"
	"github.com/vk-static/vk-static/podutil"
)

// reasonUnexpectedAdmissionError is the kubelet's reason for a critical pod it could not make
// room for.
const reasonUnexpectedAdmissionError = "UnexpectedAdmissionError"

// nodeAdmitLocked is the kubelet's predicate admission (GeneralPredicates, package admission)
// of pod against Config.Node and the pods admitted before it. A pod that fits gets nil. A
// critical pod that fits once others stop gets those others, to preempt before it runs. Any
// other pod that does not fit gets the kubelet's refusal for the first predicate it fails:
// OutOfcpu, OutOfmemory, OutOfpods, NodeAffinity, NodePorts, TaintToleration.
func (p *Provider) nodeAdmitLocked(ctx context.Context, pod *corev1.Pod) ([]*corev1.Pod, error) {
	if p.cfg.Node == nil {
		return nil, nil
	}
	node := p.cfg.Node()
	if node == nil {
		return nil, &Refusal{Reason: "InvalidNodeInfo", Message: "Kubelet cannot get node info."}
	}
	admitted := p.admittedLocked(pod.UID)
	failures := admission.Check(klog.FromContext(ctx), pod, node, admitted)
	if len(failures) == 0 {
		return nil, nil
	}
	refusal := &Refusal{Reason: failures[0].Reason(), Message: failures[0].Message()}
	if !eviction.IsCriticalPod(pod) {
		return nil, refusal
	}
	victims, err := admission.Victims(pod, admitted, failures)
	switch {
	case errors.Is(err, admission.ErrNotOnlyResources):
		// Resources are no reason to refuse a critical pod: the first other failure is.
		for _, f := range failures {
			if f.Resource == "" {
				return nil, &Refusal{Reason: f.Reason(), Message: f.Message()}
			}
		}
	case err != nil:
		return nil, &Refusal{Reason: reasonUnexpectedAdmissionError,
			Message: fmt.Sprintf("Unexpected error while attempting to recover from admission failure: preemption: error finding a set of pods to preempt: %v", err)}
	}
	return victims, nil
}

// admittedLocked are the pods the node has admitted that still hold what they asked for, the
// kubelet's active pods: neither refused nor terminated (a pod being stopped still runs), all
// but the pod uid.
func (p *Provider) admittedLocked(uid types.UID) []*corev1.Pod {
	var out []*corev1.Pod
	for id, st := range p.pods {
		if id == uid || st.refused != "" {
			continue
		}
		switch st.workState() {
		case podTerminated:
			continue
		case podSyncing:
			if podstatus.IsTerminal(st.status) {
				continue // its containers have all ended for good
			}
		}
		out = append(out, st.allocatedPod()) // what the node gave it, a resize pending or not
	}
	return out
}

// preempt stops victims so that critical pod fits, as the kubelet's critical pod admission:
// each is stopped with its own grace period and left Failed, reason Preempting. It returns
// once they have stopped (or the wait for one failed, which is logged: the pod is admitted
// all the same, as the kubelet admits it).
func (p *Provider) preempt(ctx context.Context, pod *corev1.Pod, victims []*corev1.Pod) {
	log := klog.FromContext(ctx)
	for _, v := range victims {
		log.Info("Preempting a pod to admit a critical pod", "pod", klog.KObj(v), "podUID", v.UID, "criticalPod", klog.KObj(pod))
		if err := p.stopForNode(ctx, v, podutil.GracePeriod(v), admission.ReasonPreempting, admission.MessagePreempted); err != nil {
			log.Error(err, "Preempting a pod", "pod", klog.KObj(v))
		}
	}
}
