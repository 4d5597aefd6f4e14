package lifecycle

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
)

// keptPod is a pod directory whose record (pod.json) could not be read at start-up — missing,
// empty or corrupt after a crash — with the containers (newest first) and sandboxes the
// runtime holds for that UID. Not knowing the pod is not knowing it is gone: its containers are
// never stopped or removed for it. They stay as they are, reported (log, a Warning event on the
// pod their labels name, vk_static_unreadable_pod_records), until the sources create the pod
// again (CreatePod adopts them, as restore would have) or an operator removes them.
type keptPod struct {
	err        error
	sandboxes  []*SandboxStatus
	containers []*ContainerStatus
}

// reasonRecordUnreadable is the Warning event on a pod whose record could not be read.
const reasonRecordUnreadable = "PodRecordUnreadable"

// reportKeptLocked posts a Warning event on each pod whose record could not be read (restore
// has logged them). Run calls it: the agent gives the provider its event recorder after New.
func (p *Provider) reportKeptLocked() {
	for uid, k := range p.kept {
		if pod := k.podRef(uid); pod != nil {
			p.cfg.Recorder.Eventf(pod, corev1.EventTypeWarning, reasonRecordUnreadable,
				"The agent cannot read this pod's record (%v): its %d container(s) are kept as they are until the pod is created again", k.err, len(k.containers))
		}
	}
}

// podRef is the pod the kept containers' and sandboxes' labels name, for events; nil when
// nothing names it.
func (k *keptPod) podRef(uid types.UID) *corev1.Pod {
	var labels []map[string]string
	for _, cs := range k.containers {
		labels = append(labels, cs.Labels)
	}
	for _, sb := range k.sandboxes {
		labels = append(labels, sb.Labels)
	}
	for _, l := range labels {
		if l[LabelPodName] != "" {
			return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: l[LabelPodName], Namespace: l[LabelPodNamespace], UID: uid}}
		}
	}
	return nil
}

// adoptKeptLocked gives a pod created with the UID of an unreadable record the containers and
// sandbox kept for it, as restore would have: the sources have said it should run, and its
// running containers keep running. What it cannot use is left to its next sync to remove.
func (p *Provider) adoptKeptLocked(ctx context.Context, st *podState) {
	k, ok := p.kept[st.pod.UID]
	if !ok {
		return
	}
	delete(p.kept, st.pod.UID)
	for _, sb := range k.sandboxes {
		if !adoptSandbox(st, sb) {
			st.leftovers.sandboxes = append(st.leftovers.sandboxes, sb.ID)
		}
	}
	for _, cs := range k.containers {
		if !adoptContainer(st, cs, false) {
			st.leftovers.containers = append(st.leftovers.containers, cs)
		}
	}
	settleAdopted(st)
	klog.FromContext(ctx).Info("Adopted the kept containers of a pod whose record could not be read",
		"pod", klog.KObj(st.pod), "podUID", st.pod.UID, "containers", len(st.containers))
	if p.runCtx == nil {
		return // Run starts their probes (probeRestoredLocked)
	}
	for name, rec := range st.containers {
		if rec.running() {
			c := containerSpec(st.pod, name)
			p.probes.Add(p.runCtx, st.pod.UID, c, rec.current.ID, rec.current.StartedAt, p.targetLocked(st, c, rec.current.ID))
		}
	}
}
