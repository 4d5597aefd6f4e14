package lifecycle

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/lifecycle/admission"
)

// In-place resize, as the kubelet's allocation manager and kuberuntime do it. An API pod's
// containers' resources change through the resize subresource and arrive by UpdatePod; the
// spec the lifecycle holds (podState.pod) is then what is desired. Each sync first decides the
// resize (allocateResizeLocked): it is allocated if the pod, so resized, still fits the node
// beside the other admitted pods, as they are allocated — else it is pending, Deferred (tried
// again when pods leave, and every resizeRetry), or Infeasible (never, as asked). Then it is
// actuated (actuateResize): each running container whose resources differ from its allocation
// gets them in place from the runtime (ResourceUpdater), or is restarted with them where its
// resizePolicy says RestartContainer for a resource that changed. Every instance is created
// with its container's allocation (allocatedPod), never with a desired spec not yet admitted.

// Reasons and messages of a resize, the kubelet's.
const (
	reasonResizeStarted    = "ResizeStarted"
	reasonResizeCompleted  = "ResizeCompleted"
	reasonResizeDeferred   = "ResizeDeferred"
	reasonResizeInfeasible = "ResizeInfeasible"
	reasonResizeError      = "ResizeError"
	// reasonResizeRestart is killContainer's reason for a container whose resizePolicy
	// restarts it.
	reasonResizeRestart = "ResizeRestart"
	// messageResizeUnsupported is the kubelet's Infeasible message on a node that cannot resize
	// in place: here, a Runtime without ResourceUpdater.
	messageResizeUnsupported = "In-place pod resize is not supported on this node"
	// reasonResizeInProgressError is PodResizeInProgress's reason while actuating fails.
	reasonResizeInProgressError = "Error"
)

// resizeRetry is how often a Deferred resize is decided again without another event, the
// kubelet's retryDelay.
const resizeRetry = 3 * time.Minute

// podResize is a pod's in-place resize state.
type podResize struct {
	// allocated are the resources the node admitted each container with, by name (init
	// containers included): the spec's at admission, a resize's once it fits. Kept in the pod's
	// record, so that a restarted agent starts containers with them.
	allocated map[string]corev1.ResourceRequirements
	// actuated are the resources each container's current instance runs with, by name: its
	// allocation when it was created, a resize's once the runtime applied it. Kept in the
	// record too: a restarted agent knows what is left to apply.
	actuated map[string]corev1.ResourceRequirements
	// pending and inProgress are the PodResizePending and PodResizeInProgress conditions; nil
	// when the pod has none.
	pending, inProgress *corev1.PodCondition
	// decided is the generation of the spec whose resize was last decided: the status's
	// observedGeneration while the pod runs, so that a status reported between an UpdatePod
	// and its sync never shows a resize seen that is not yet decided.
	decided int64
	// decidedFor is the spec (podState.pod, replaced, never changed, by UpdatePod) whose
	// resize was decided with nothing left pending: the syncs that follow skip the decision.
	// podFor and pod are allocatedPod's last answer and the spec it was for.
	decidedFor, podFor, pod *corev1.Pod
}

// resources are the resources of every container of pod, by name: an allocation.
func resources(pod *corev1.Pod) map[string]corev1.ResourceRequirements {
	out := make(map[string]corev1.ResourceRequirements, len(pod.Spec.InitContainers)+len(pod.Spec.Containers))
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			out[cs[i].Name] = *cs[i].Resources.DeepCopy()
		}
	}
	return out
}

// withResources is pod with each container's resources as alloc has them: pod itself when they
// are all the same.
func withResources(pod *corev1.Pod, alloc map[string]corev1.ResourceRequirements) *corev1.Pod {
	same := true
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			if a, ok := alloc[cs[i].Name]; ok && !apiequality.Semantic.DeepEqual(cs[i].Resources, a) {
				same = false
			}
		}
	}
	if same {
		return pod
	}
	out := pod.DeepCopy()
	for _, cs := range [][]corev1.Container{out.Spec.InitContainers, out.Spec.Containers} {
		for i := range cs {
			if a, ok := alloc[cs[i].Name]; ok {
				cs[i].Resources = *a.DeepCopy()
			}
		}
	}
	return out
}

// allocatedPod is the pod as the node admitted it: its spec with every container's allocated
// resources. Containers are created from it, and admission counts it.
func (st *podState) allocatedPod() *corev1.Pod {
	if st.resize.allocated == nil {
		return st.pod
	}
	// Every admission asks it of every pod: built once per spec and allocation.
	if st.resize.podFor != st.pod {
		st.resize.pod, st.resize.podFor = withResources(st.pod, st.resize.allocated), st.pod
	}
	return st.resize.pod
}

// allocatedContainer is c with its allocated resources.
func (st *podState) allocatedContainer(c *corev1.Container) *corev1.Container {
	a, ok := st.resize.allocated[c.Name]
	if !ok || apiequality.Semantic.DeepEqual(c.Resources, a) {
		return c
	}
	out := *c
	out.Resources = *a.DeepCopy()
	return &out
}

// allocateResizeLocked decides a resize of st's pod, the kubelet's handlePodResourcesResize:
// nothing to do when the spec's resources are the allocated ones (a pending condition is
// cleared); allocated, with PodResizeInProgress, when the resized pod fits; else
// PodResizePending, Deferred with the admission's message, or Infeasible when the runtime
// cannot resize in place what the resize changes. It reports whether the allocation changed.
func (p *Provider) allocateResizeLocked(ctx context.Context, uid types.UID, st *podState) bool {
	if st.resize.allocated == nil {
		st.resize.allocated = resources(st.pod)
	}
	if st.resize.decidedFor == st.pod {
		return false
	}
	st.resize.decided = st.pod.Generation
	desired := resources(st.pod)
	if sameResources(desired, st.resize.allocated) {
		st.resize.pending, st.resize.decidedFor = nil, st.pod
		return false
	}
	gen := st.pod.Generation
	now := metaNow(p.cfg.Clock)
	reason, message := p.resizeFitsLocked(ctx, uid, st)
	if reason != "" {
		event := reasonResizeDeferred
		condReason := corev1.PodReasonDeferred
		if reason == corev1.PodReasonInfeasible {
			event, condReason = reasonResizeInfeasible, corev1.PodReasonInfeasible
		} else {
			p.wakeLocked(uid, now.Add(resizeRetry))
		}
		prev := st.resize.pending
		st.resize.pending = resizeCondition(corev1.PodResizePending, prev, condReason, message, gen, now)
		if prev == nil || prev.Reason != condReason || prev.ObservedGeneration != gen {
			p.cfg.Recorder.Event(st.pod, corev1.EventTypeWarning, event, resizeMessage(st.pod, "Pod resize "+reason, message))
		}
		return false
	}
	st.resize.allocated, st.resize.podFor = desired, nil
	st.resize.pending, st.resize.decidedFor = nil, st.pod
	// A new allocation starts a new resize: the condition's generation is this one.
	st.resize.inProgress = resizeCondition(corev1.PodResizeInProgress, nil, "", "", gen, now)
	p.cfg.Recorder.Event(st.pod, corev1.EventTypeNormal, reasonResizeStarted, resizeMessage(st.pod, "Pod resize started", ""))
	if err := p.savePod(st); err != nil {
		klog.FromContext(ctx).Error(err, "Recording a pod's resize; recorded at its next change")
	}
	// What it gave back may let another pod's deferred resize fit.
	p.retryDeferredResizesLocked(uid)
	return true
}

// resizeFitsLocked is the kubelet's admission of a resize: the runtime must be able to apply
// it (Infeasible) and the pod, resized, must pass the node's admission beside the other
// admitted pods as they are allocated (Deferred: it may fit once others leave or shrink).
// Both empty: it fits.
func (p *Provider) resizeFitsLocked(ctx context.Context, uid types.UID, st *podState) (reason, message string) {
	if _, ok := p.rt.(ResourceUpdater); !ok && needsInPlaceUpdate(st.pod, st.resize.allocated) {
		return corev1.PodReasonInfeasible, messageResizeUnsupported
	}
	if p.cfg.Node == nil {
		return "", ""
	}
	node := p.cfg.Node()
	if node == nil {
		return "InvalidNodeInfo", "Kubelet cannot get node info."
	}
	failures := admission.Check(klog.FromContext(ctx), st.pod, node, p.admittedLocked(uid))
	if len(failures) == 0 {
		return "", ""
	}
	return failures[0].Reason(), failures[0].Message()
}

// retryDeferredResizesLocked syncs every other pod whose resize is Deferred: the kubelet retries
// them when pods are removed or resized.
func (p *Provider) retryDeferredResizesLocked(except types.UID) {
	for uid, st := range p.pods {
		if uid != except && st.resize.pending != nil && st.resize.pending.Reason == corev1.PodReasonDeferred {
			p.kickLocked(uid)
		}
	}
}

// needsInPlaceUpdate reports whether a container of pod changes, from alloc, a resource whose
// resizePolicy does not restart it.
func needsInPlaceUpdate(pod *corev1.Pod, alloc map[string]corev1.ResourceRequirements) bool {
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			update, _ := resizeAction(&cs[i], alloc[cs[i].Name], cs[i].Resources)
			if update {
				return true
			}
		}
	}
	return false
}

// resizeAction is what changing c's resources from cur to want takes, the kubelet's
// computePodResizeAction: an in-place update when a resource changes whose resizePolicy is
// NotRequired (the default), a restart when one changes whose policy is RestartContainer
// (which then applies every change).
func resizeAction(c *corev1.Container, cur, want corev1.ResourceRequirements) (update, restart bool) {
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if sameQuantity(cur.Requests, want.Requests, name) && sameQuantity(cur.Limits, want.Limits, name) {
			continue
		}
		if resizePolicy(c, name) == corev1.RestartContainer {
			restart = true
		} else {
			update = true
		}
	}
	return update && !restart, restart
}

// resizePolicy is c's restart policy for resizing resource name: NotRequired unless it says.
func resizePolicy(c *corev1.Container, name corev1.ResourceName) corev1.ResourceResizeRestartPolicy {
	for _, p := range c.ResizePolicy {
		if p.ResourceName == name {
			return p.RestartPolicy
		}
	}
	return corev1.NotRequired
}

func sameQuantity(a, b corev1.ResourceList, name corev1.ResourceName) bool {
	qa, okA := a[name]
	qb, okB := b[name]
	return okA == okB && qa.Cmp(qb) == 0
}

func sameResources(a, b map[string]corev1.ResourceRequirements) bool {
	if len(a) != len(b) {
		return false
	}
	for name, ra := range a {
		rb, ok := b[name]
		if !ok || !apiequality.Semantic.DeepEqual(ra, rb) {
			return false
		}
	}
	return true
}

// resizeStep is one container's part of actuating a resize.
type resizeStep struct {
	name    string
	id      string
	restart bool
	c       *corev1.Container
}

// actuateResize applies the pod's allocation to its running containers, the kubelet's
// doPodResizeAction: in place through the runtime, or by a restart (the next plan starts the
// container again at once, whatever the restart policy, with its allocation). Once every
// running container runs with its allocation, PodResizeInProgress is cleared and the
// ResizeCompleted event recorded. A failure sets PodResizeInProgress's reason Error and is
// tried again.
func (p *Provider) actuateResize(ctx context.Context, uid types.UID) {
	p.mu.Lock()
	st, ok := p.pods[uid]
	if !ok {
		p.mu.Unlock()
		return
	}
	pod := st.allocatedPod()
	var steps []resizeStep
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			c := &cs[i]
			rec := st.containers[c.Name]
			if !rec.running() {
				continue
			}
			cur, ok := st.resize.actuated[c.Name]
			update, restart := resizeAction(c, cur, c.Resources)
			if !ok {
				// Not recorded (an agent stopped before it recorded the instance): it runs with
				// its allocation, unless a resize was in progress — then it is applied in
				// place, which changes nothing if it has it, never by a restart.
				update, restart = st.resize.inProgress != nil, false
			}
			if update || restart {
				steps = append(steps, resizeStep{name: c.Name, id: rec.current.ID, restart: restart, c: c})
			}
		}
	}
	if len(steps) == 0 {
		if p.completeResizeLocked(st) {
			if err := p.savePod(st); err != nil {
				klog.FromContext(ctx).Error(err, "Recording a pod's resize; recorded at its next change")
			}
		}
		p.mu.Unlock()
		return
	}
	updater, _ := p.rt.(ResourceUpdater)
	p.mu.Unlock()

	var failed error
	for _, s := range steps {
		if s.restart {
			p.mu.Lock()
			if rec := st.containers[s.name]; rec != nil {
				rec.resizeRestart = true
			}
			p.mu.Unlock()
			p.killContainer(ctx, uid, s.name, reasonResizeRestart)
			continue
		}
		if updater == nil {
			continue // Infeasible: never allocated
		}
		if err := updater.UpdateContainerResources(ctx, s.id, pod, s.c); err != nil {
			failed = err
			klog.FromContext(ctx).Error(err, "Resizing a container in place; tried again", "container", s.name)
			continue
		}
		p.mu.Lock()
		if rec := st.containers[s.name]; rec != nil && rec.current != nil && rec.current.ID == s.id {
			p.setActuatedLocked(st, s.name, s.c.Resources)
		}
		p.mu.Unlock()
	}

	p.mu.Lock()
	defer p.mu.Unlock()
	if failed != nil {
		now := metaNow(p.cfg.Clock)
		st.resize.inProgress = resizeCondition(corev1.PodResizeInProgress, st.resize.inProgress, reasonResizeInProgressError, failed.Error(), st.pod.Generation, now)
		p.cfg.Recorder.Event(st.pod, corev1.EventTypeWarning, reasonResizeError, resizeMessage(pod, "Pod resize error", failed.Error()))
		p.wakeLocked(uid, now.Add(retryAfter))
		return
	}
	p.completeResizeLocked(st) // every step was taken: a restart's instance starts now
	if err := p.savePod(st); err != nil {
		klog.FromContext(ctx).Error(err, "Recording a pod's resize; recorded at its next change")
	}
}

// setActuatedLocked records that container name's current instance runs with res.
func (p *Provider) setActuatedLocked(st *podState, name string, res corev1.ResourceRequirements) {
	if st.resize.actuated == nil {
		st.resize.actuated = map[string]corev1.ResourceRequirements{}
	}
	st.resize.actuated[name] = *res.DeepCopy()
}

// completeResizeLocked clears PodResizeInProgress once nothing is left to actuate, with the
// kubelet's ResizeCompleted event, and reports whether there was one.
func (p *Provider) completeResizeLocked(st *podState) bool {
	if st.resize.inProgress == nil {
		return false
	}
	gen := st.resize.inProgress.ObservedGeneration
	st.resize.inProgress = nil
	p.cfg.Recorder.Event(st.pod, corev1.EventTypeNormal, reasonResizeCompleted, resizeMessageAt(st.allocatedPod(), gen, "Pod resize completed", ""))
	return true
}

// resizing is the generation of the resize in progress, for the pod's record (0: none).
func (r *podResize) resizing() int64 {
	if r.inProgress == nil {
		return 0
	}
	return r.inProgress.ObservedGeneration
}

// restoredResize is a pod's resize state from its record: a resize in progress stays in progress
// (its condition back, as the kubelet backfills it), to be completed.
func restoredResize(saved *savedPod, now metav1.Time) podResize {
	r := podResize{allocated: saved.Allocated, actuated: saved.Actuated}
	if saved.Resizing != 0 {
		r.inProgress = resizeCondition(corev1.PodResizeInProgress, nil, "", "", saved.Resizing, now)
	}
	return r
}

// resizeCondition is a resize condition of type t, its transition time kept from prev while
// its reason stays.
func resizeCondition(t corev1.PodConditionType, prev *corev1.PodCondition, reason, message string, gen int64, now metav1.Time) *corev1.PodCondition {
	c := &corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, Reason: reason, Message: message,
		ObservedGeneration: gen, LastProbeTime: now, LastTransitionTime: now}
	if prev != nil && prev.Reason == reason {
		c.LastTransitionTime = prev.LastTransitionTime
	}
	return c
}

// observedGeneration is the status's observedGeneration, as the kubelet reports it: the
// generation of the spec the status is of — while the pod runs, the one whose resize was
// decided.
func observedGeneration(st *podState) int64 {
	if st.workState() == podSyncing {
		return st.resize.decided
	}
	return st.pod.Generation
}

// resizeConditions are the pod's resize conditions for its status, none once it is terminal.
func resizeConditions(st *podState) []corev1.PodCondition {
	var out []corev1.PodCondition
	if st.workState() != podSyncing {
		return nil
	}
	for _, c := range []*corev1.PodCondition{st.resize.pending, st.resize.inProgress} {
		if c != nil {
			out = append(out, *c)
		}
	}
	return out
}

// resizeMessage is the kubelet's resize event message: prefix, then the pod's containers'
// resources and generation (and error) as JSON.
func resizeMessage(pod *corev1.Pod, prefix, errMsg string) string {
	return resizeMessageAt(pod, pod.Generation, prefix, errMsg)
}

func resizeMessageAt(pod *corev1.Pod, gen int64, prefix, errMsg string) string {
	type allocation struct {
		Name      string                      `json:"name"`
		Resources corev1.ResourceRequirements `json:"resources,omitempty"`
	}
	summary := struct {
		InitContainers []allocation `json:"initContainers,omitempty"`
		Containers     []allocation `json:"containers,omitempty"`
		Generation     int64        `json:"generation"`
		Error          string       `json:"error,omitempty"`
	}{Generation: gen, Error: errMsg}
	for _, c := range pod.Spec.InitContainers {
		summary.InitContainers = append(summary.InitContainers, allocation{Name: c.Name, Resources: c.Resources})
	}
	for _, c := range pod.Spec.Containers {
		summary.Containers = append(summary.Containers, allocation{Name: c.Name, Resources: c.Resources})
	}
	b, err := json.Marshal(summary)
	if err != nil {
		return prefix
	}
	return fmt.Sprintf("%s: %s", prefix, b)
}

// statusResources are a container's resources and allocated requests for its status, as the
// kubelet reports them for a container the runtime has: the allocation, with the cpu and memory
// that the running instance actually has where it runs.
func statusResources(st *podState, c *corev1.Container, rec *containerRecord) (*corev1.ResourceRequirements, corev1.ResourceList) {
	alloc, ok := st.resize.allocated[c.Name]
	if !ok {
		alloc = c.Resources
	}
	out := alloc.DeepCopy()
	if act, ok := st.resize.actuated[c.Name]; ok && rec.running() {
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			copyQuantity(out.Limits, act.Limits, name)
			copyQuantity(out.Requests, act.Requests, name)
		}
	}
	return out, alloc.DeepCopy().Requests
}

// copyQuantity sets dst[name] to src's, where dst has such a list.
func copyQuantity(dst, src corev1.ResourceList, name corev1.ResourceName) {
	if dst == nil {
		return
	}
	if q, ok := src[name]; ok {
		dst[name] = q.DeepCopy()
	}
}
