package node

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/kubeclient"
	"github.com/vk-static/vk-static/podmanager"
	"github.com/vk-static/vk-static/podstatus"
	"github.com/vk-static/vk-static/podutil"
)

// statusWriter writes the provider's status to the API pod or to the static pod's mirror.
// The status queue coalesces: a worker reads the newest status when it gets to the key, so a
// burst of notifications for one pod costs one write.
type statusWriter struct {
	cfg   PodControllerConfig
	known *knownPods

	mu sync.Mutex
	// written holds, by API object UID, the last status sent until the watch echoes it back:
	// until then the pod manager's copy is older and must not make us write it again.
	written map[types.UID]writtenStatus
	// settled holds, by API object UID, the provider's status and the object's resourceVersion
	// last seen to agree. While neither has changed there is nothing to compare: the check every
	// resync makes costs two lookups, not a status built and compared field by field.
	settled map[types.UID]settledStatus
	// writing serialises the writes of one key, and only of one key: the status workers'
	// round trips for different pods never wait for each other.
	writing keyMutex
}

// keyMutex is a mutual exclusion per key.
type keyMutex struct {
	mu   sync.Mutex
	held map[string]chan struct{} // closed when the key is unlocked
}

func (m *keyMutex) lock(key string) {
	for {
		m.mu.Lock()
		released, busy := m.held[key]
		if !busy {
			if m.held == nil {
				m.held = map[string]chan struct{}{}
			}
			m.held[key] = make(chan struct{})
			m.mu.Unlock()
			return
		}
		m.mu.Unlock()
		<-released
	}
}

func (m *keyMutex) unlock(key string) {
	m.mu.Lock()
	released := m.held[key]
	delete(m.held, key)
	m.mu.Unlock()
	close(released)
}

// writtenStatus is a status sent, and what it was built from.
type writtenStatus struct {
	status *corev1.PodStatus // as sent, with the conditions of others in place
	// reported is the provider's status it was built from (never modified once passed on;
	// knownPod.status, the controller's copy of one report), and generation the API
	// object's spec generation it was built with.
	reported   *corev1.PodStatus
	generation int64
}

type settledStatus struct {
	reported        *corev1.PodStatus // the provider's, as notified (never modified once passed on)
	resourceVersion string
}

func newStatusWriter(cfg PodControllerConfig, known *knownPods) *statusWriter {
	return &statusWriter{cfg: cfg, known: known,
		written: make(map[types.UID]writtenStatus, 128), settled: make(map[types.UID]settledStatus, 128)}
}

func (w *statusWriter) write(ctx context.Context, key string) error {
	// Only the status workers write (syncStatus, finishDeletion), and their queue never works
	// one key twice at once; the lock keeps a second writer, should one come, from sending
	// what the first just sent.
	w.writing.lock(key)
	defer w.writing.unlock(key)
	st, ok := w.known.get(key)
	if !ok || st.status == nil {
		return nil
	}
	target, ok := w.target(st)
	if !ok {
		return nil // no API object (yet): a mirror or pod event requeues the key
	}
	agreed := settledStatus{reported: st.status, resourceVersion: target.ResourceVersion}
	if w.isSettled(target.UID, agreed) {
		return nil
	}
	// While the echo of a write is on its way, what was written is what the API server holds:
	// build on it, so that a status reported again is not written again with new transition
	// times.
	last := w.lastWritten(target.UID)
	if last.status != nil && last.reported == st.status && last.generation == target.Generation {
		// Built again from the same provider status, on what was written and the same spec,
		// the status would be what was written: the echo of the write (settled once the API
		// object shows it) or a key queued again before it came. Nothing to build: the watch
		// echoing each write made a second build, copy and encoding per pod.
		if isEchoOf(&target.Status, last.status, st.status) {
			w.settle(target.UID, agreed)
		}
		return nil
	}
	held := previous(last.status, &target.Status)
	status := normalize(buildStatus(&target.Spec, held, st.status, metav1.NewTime(w.cfg.Clock.Now())))
	status = withOthersConditions(status, &target.Status)
	// Compared twice below: encoded once.
	built := encodeStatus(status)
	if built.same(&target.Status) {
		// The API object shows it (the watch echoed our write): nothing to keep for it.
		w.settle(target.UID, agreed)
		return nil
	}
	if last.status != nil && built.same(last.status) {
		return nil // written; the echo is on its way
	}
	patch, err := statusPatch(target.UID, withoutOthersConditions(status, st.status), endedConditions(status, &target.Status)...)
	if err != nil {
		return err
	}
	err = patchPodStatus(ctx, w.cfg.Client, target.Namespace, target.Name, patch)
	switch {
	case apierrors.IsNotFound(err) || kubeclient.IsReplaced(err):
		return nil // gone or replaced; its successor's event requeues the key
	case err != nil:
		return fmt.Errorf("patch status of %s: %w", key, err)
	}
	w.mu.Lock()
	w.written[target.UID] = writtenStatus{status: status, reported: st.status, generation: target.Generation}
	w.mu.Unlock()
	// Events about a static pod refer to the static pod (its UID is the mirror's config.mirror):
	// that is where `kubectl describe` of the mirror looks for them, as for the kubelet's.
	w.recordStarted(st, held, status)
	if logger := klog.FromContext(ctx).V(4); logger.Enabled() { // no arguments built at -v < 4
		logger.Info("Wrote pod status", "pod", klog.KObj(target), "phase", status.Phase)
	}
	return nil
}

// target is the API object that shows the status of the provider's pod st: the pod itself,
// or for a static pod its mirror — only if that mirror belongs to this static pod (the hash
// matches), so a stale mirror never shows the new pod's status. An API pod is found by its UID
// alone: no pod is built to ask (st.ref), which every write of every pod did.
func (w *statusWriter) target(st knownPod) (*corev1.Pod, bool) {
	if !podutil.IsStaticAnnotated(st.meta.Annotations) {
		return w.cfg.Pods.GetPodByUID(st.uid())
	}
	pod := st.ref()
	m, ok := w.cfg.Pods.GetMirrorPodByPod(pod)
	if !ok || !w.cfg.Pods.IsMirrorPodOf(m, pod) || m.DeletionTimestamp != nil {
		return nil, false
	}
	if w.cfg.Pods.TranslatePodUID(m.UID) != podmanager.ResolvedPodUID(pod.UID) {
		return nil, false
	}
	return m, true
}

// forget drops what was written for an API object that is gone.
func (w *statusWriter) forget(uid types.UID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.written, uid)
	delete(w.settled, uid)
}

// settle records that the API object uid shows the provider's status: nothing written is
// awaited any more.
func (w *statusWriter) settle(uid types.UID, agreed settledStatus) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.written, uid)
	if agreed.resourceVersion != "" { // without one, a change of the object could not be told
		w.settled[uid] = agreed
	}
}

// isSettled reports whether uid was last seen agreeing with exactly this provider status at
// exactly this resourceVersion.
func (w *statusWriter) isSettled(uid types.UID, agreed settledStatus) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	s, ok := w.settled[uid]
	return ok && s == agreed
}

func (w *statusWriter) lastWritten(uid types.UID) writtenStatus {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.written[uid]
}

func previous(last, current *corev1.PodStatus) *corev1.PodStatus {
	if last != nil {
		return last
	}
	return current
}

// recordStarted records a Started event for every container that has started since before:
// startup-latency tools (kube-burner, clusterloader2) read them.
// The pod the events name is built only when there is one to record (once per container), and
// started containers are found by scanning: most writes record none.
func (w *statusWriter) recordStarted(st knownPod, before, after *corev1.PodStatus) {
	var pod *corev1.Pod
	for i := range after.ContainerStatuses {
		cs := &after.ContainerStatuses[i]
		if !hasStarted(cs) || startedIn(before.ContainerStatuses, cs.Name) {
			continue
		}
		if pod == nil {
			pod = st.ref()
		}
		w.cfg.Recorder.Eventf(pod, corev1.EventTypeNormal, "Started", "Started container %s", cs.Name)
	}
}

func hasStarted(cs *corev1.ContainerStatus) bool {
	return cs.State.Running != nil || cs.State.Terminated != nil
}

// startedIn reports whether statuses has container name started.
func startedIn(statuses []corev1.ContainerStatus, name string) bool {
	for i := range statuses {
		if statuses[i].Name == name && hasStarted(&statuses[i]) {
			return true
		}
	}
	return false
}

// normalize truncates status's timestamps to whole seconds, as the API server stores them
// (metav1.Time has second precision on the wire): comparing an untruncated status with the one
// the watch echoes back would always differ and write again. It truncates rather than takes
// metav1.Time.Rfc3339Copy, which formats and parses every timestamp on every status write:
// the wire and the comparison (sameStatus) both see seconds since the epoch, not the location.
func normalize(s *corev1.PodStatus) *corev1.PodStatus {
	trunc := func(t *metav1.Time) {
		if t != nil {
			*t = wholeSeconds(*t)
		}
	}
	for i := range s.Conditions {
		trunc(&s.Conditions[i].LastProbeTime)
		trunc(&s.Conditions[i].LastTransitionTime)
	}
	if s.StartTime != nil { // may be shared with the API object: replace, never write through
		t := wholeSeconds(*s.StartTime)
		s.StartTime = &t
	}
	for _, list := range [][]corev1.ContainerStatus{s.InitContainerStatuses, s.ContainerStatuses, s.EphemeralContainerStatuses} {
		for i := range list {
			for _, st := range []*corev1.ContainerState{&list[i].State, &list[i].LastTerminationState} {
				if st.Running != nil {
					trunc(&st.Running.StartedAt)
				}
				if st.Terminated != nil {
					trunc(&st.Terminated.StartedAt)
					trunc(&st.Terminated.FinishedAt)
				}
			}
		}
	}
	return s
}

// wholeSeconds is t at the precision the API server stores it.
func wholeSeconds(t metav1.Time) metav1.Time {
	return metav1.NewTime(t.Truncate(time.Second))
}

// buildStatus is the status to write: the provider's, with every condition the agent owns
// present (derived from its container statuses where the provider reports none) and each lastTransitionTime kept from the API object while the condition's status
// is unchanged (so it records when it really changed), and fields the provider leaves empty
// kept from the API object.
func buildStatus(spec *corev1.PodSpec, current, reported *corev1.PodStatus, now metav1.Time) *corev1.PodStatus {
	s := reported.DeepCopy()
	if s.QOSClass == "" {
		s.QOSClass = current.QOSClass
	}
	if s.StartTime == nil {
		s.StartTime = current.StartTime
	}
	if s.HostIP == "" {
		s.HostIP, s.HostIPs = current.HostIP, current.HostIPs
	}
	if s.PodIP == "" {
		s.PodIP, s.PodIPs = current.PodIP, current.PodIPs
	}
	derived := podstatus.FromContainers(spec, s)
	conditions := make([]corev1.PodCondition, 0, len(s.Conditions)+len(podstatus.Owned))
	for _, t := range podstatus.Owned {
		cond, ok := podstatus.Find(s.Conditions, t)
		if !ok {
			cond = corev1.PodCondition{Type: t, Status: derived[t]}
		}
		cond.LastTransitionTime = podstatus.TransitionTime(cond, current.Conditions, now)
		cond.LastProbeTime = metav1.Time{}
		conditions = append(conditions, cond)
	}
	for _, cond := range s.Conditions { // provider-specific conditions pass through
		if !podstatus.IsOwned(cond.Type) {
			conditions = append(conditions, cond)
		}
	}
	s.Conditions = conditions
	return s
}

// patchPodStatus sends a strategic-merge patch to the pod's status subresource. The API
// server answers with the pod, which nobody here reads (the watch brings the pod back):
// through a real REST client the answer is asked for as the pod's metadata only and dropped
// unread (kubeclient.SendDroppingAnswer) — at 1000 pods starting, decoding the whole pod was
// a fifth of the agent's allocations (docs/performance.md, "Closing the gaps to the floor").
// A client without one (client-go's fake) takes the typed path.
func patchPodStatus(ctx context.Context, client kubeclient.Interface, namespace, name string, patch []byte) error {
	if rc, ok := client.CoreRESTClient().(*rest.RESTClient); ok && rc != nil {
		return kubeclient.SendDroppingAnswer(ctx, rc.Patch(types.StrategicMergePatchType).Namespace(namespace).
			Resource("pods").Name(name).SubResource("status").Body(patch))
	}
	_, err := client.Pods(namespace).Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	return err
}

// statusPatch is the body of the strategic-merge patch that writes status to pod uid. The API
// merges podIPs and hostIPs by ip: sent as they are, a new address would be added beside the
// one the API server holds, and two addresses of one family are refused ("may specify no more
// than one IP for each IP family") — every later write with them. So each list is sent with
// the "$patch": "replace" directive, which replaces it whole, as the kubelet's two-way patch
// from the status it wrote does. An empty list is left out: what the API server holds stays
// (a pod's addresses never go away while it lives). The conditions merge by type, keeping
// those others set (readiness gates, DisruptionTarget).
//
// A condition named in ended (a resize no longer pending or in progress) is removed with the
// "$patch": "delete" directive: merged by type, it would otherwise stay.
//
// The body is a struct, not a map: encoding/json sorts a map's keys and encodes each value
// through an interface on every write (docs/performance.md, "CPU per write"); the struct's
// fields are in the map's key order, so the bytes are the same.
func statusPatch(uid types.UID, status *corev1.PodStatus, ended ...corev1.PodConditionType) ([]byte, error) {
	body := statusBody{PodStatus: status, PodIPs: replaceList(status.PodIPs), HostIPs: replaceList(status.HostIPs)}
	if len(ended) > 0 {
		conditions := make([]any, 0, len(status.Conditions)+len(ended))
		for _, c := range status.Conditions {
			conditions = append(conditions, c)
		}
		for _, t := range ended {
			conditions = append(conditions, map[string]string{"type": string(t), "$patch": "delete"})
		}
		return json.Marshal(statusPatchBody[endingStatusBody]{Metadata: patchPrecondition{UID: uid},
			Status: endingStatusBody{statusBody: body, Conditions: conditions}})
	}
	return json.Marshal(statusPatchBody[statusBody]{Metadata: patchPrecondition{UID: uid}, Status: body})
}

// statusPatchBody is statusPatch's body.
type statusPatchBody[S any] struct {
	Metadata patchPrecondition `json:"metadata"`
	Status   S                 `json:"status"`
}

// patchPrecondition is the patch's metadata: the UID makes the API server refuse it for a
// newer pod of the same name.
type patchPrecondition struct {
	UID types.UID `json:"uid"`
}

// statusBody is a status whose podIPs and hostIPs replace the API server's (their fields at
// the outer level hide the embedded ones from encoding/json).
type statusBody struct {
	*corev1.PodStatus
	PodIPs  []any `json:"podIPs,omitempty"`
	HostIPs []any `json:"hostIPs,omitempty"`
}

// endingStatusBody is a statusBody whose conditions end with the directives that remove the
// conditions that ended (its field hides the embedded one from encoding/json).
type endingStatusBody struct {
	statusBody
	Conditions []any `json:"conditions"`
}

// replaceDirective is the strategic-merge list element that makes the list replace the
// server's.
var replaceDirective = map[string]string{"$patch": "replace"}

// replaceList is list with replaceDirective after its elements; nil for an empty list.
func replaceList[T any](list []T) []any {
	if len(list) == 0 {
		return nil
	}
	out := make([]any, 0, len(list)+1)
	for _, e := range list {
		out = append(out, e)
	}
	return append(out, replaceDirective)
}

// sameStatus reports whether a and b are the same status, by their protobuf encodings: the
// generated marshalers are deterministic (map keys sorted), never reflect, and allocate two
// buffers, where equality.Semantic.DeepEqual walked both by reflection — a tenth of the
// agent's CPU at 1000 pods starting. nil and empty lists encode alike, as Semantic has them
// equal; timestamps are compared at the precision they are written with. A difference the
// encodings show and Semantic would not (a quantity written in another form) costs at most
// one write more, never one less.
func sameStatus(a, b *corev1.PodStatus) bool {
	return encodeStatus(b).same(a)
}

// encodedStatus is a status with its protobuf encoding, made once to compare it with several
// others (the status writer compares the status it built with the API object's and with the
// one it last wrote).
type encodedStatus struct {
	status  *corev1.PodStatus
	encoded []byte
	err     error
}

func encodeStatus(s *corev1.PodStatus) encodedStatus {
	b, err := s.Marshal()
	return encodedStatus{status: s, encoded: b, err: err}
}

// same is sameStatus(other, e.status).
func (e encodedStatus) same(other *corev1.PodStatus) bool {
	ob, err := other.Marshal()
	if e.err != nil || err != nil {
		return equality.Semantic.DeepEqual(other, e.status)
	}
	return bytes.Equal(ob, e.encoded)
}
