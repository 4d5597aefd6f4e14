package sources

import (
	"bytes"
	"fmt"
	"maps"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vk-static/vk-static/podutil"
)

// Merger turns per-source snapshots into ordered PodUpdates, like the kubelet's podStorage. It
// is a pure state machine: no I/O, no goroutines, no clock, not safe for concurrent use (Mux
// serialises it).
//
// Per snapshot it emits, for that source and in this order, REMOVE (gone from the snapshot), ADD
// (new UID), UPDATE (spec, labels, annotations or owner references changed), DELETE (graceful
// deletion started) and RECONCILE (only status changed); operations with no pods are left out.
// A full snapshot is compared with everything the merger holds for its source (O(pods)); a
// partial one touches only the UIDs it names (O(changes)): its Pods are compared as a full
// snapshot's would be and its Deleted are removed, while the source's other pods stay as they
// are. A change of kubernetes.io/config.seen alone is no change, and a pod keeps the config.seen
// value it was first emitted with. Every emitted pod carries kubernetes.io/config.source = its
// source; a pod that already does (the API source stamps its pods as they arrive) is emitted as
// it is, so unchanged and already-stamped pods cost no copy.
//
// Full names (name_namespace) are unique across all sources: the first pod to claim a name keeps
// it and a later pod with the same name is rejected (reported as a Problem once) and waits;
// when the name is released it is admitted with an ADD — possibly in the updates of another
// source's snapshot. Mirror pods never claim names: a mirror has its static pod's name.
type Merger struct {
	sources map[string]*sourceState
	order   []string // sources in the order they were first seen, for admitting waiting pods
	names   map[string]nameClaim
}

type sourceState struct {
	seen       bool            // a full snapshot has been merged
	unreadable map[string]bool // the last full snapshot's Unreadable
	pods       map[types.UID]*mergedPod
	waiting    []*corev1.Pod // rejected for a duplicate name, in snapshot order
	reported   map[types.UID]bool
	locations  map[types.UID]string // read-only: a full snapshot's, or the merger's own copy
}

// mergedPod is a pod as the source sent it (in) and as the merger last emitted it (out).
type mergedPod struct {
	in, out *corev1.Pod
	claim   string // the full name it holds; "" for mirror pods
}

type nameClaim struct {
	source string
	uid    types.UID
}

// NewMerger returns a Merger that has seen no source.
func NewMerger() *Merger {
	return &Merger{sources: map[string]*sourceState{}, names: map[string]nameClaim{}}
}

// Seen reports whether source has delivered its first full snapshot.
func (m *Merger) Seen(source string) bool {
	st := m.sources[source]
	return st != nil && st.seen
}

// PodCount is the number of pods the merger holds for source (pods waiting for a duplicate
// name not counted).
func (m *Merger) PodCount(source string) int {
	if st := m.sources[source]; st != nil {
		return len(st.pods)
	}
	return 0
}

// MergeAndReport applies one snapshot and returns the updates it causes, in order, and the pods
// it newly rejected. A pod rejected again in a later snapshot is not reported again.
func (m *Merger) MergeAndReport(s Snapshot) ([]PodUpdate, []Problem) {
	st := m.sources[s.Source]
	if st == nil {
		st = &sourceState{pods: map[types.UID]*mergedPod{}, reported: map[types.UID]bool{}}
		m.sources[s.Source] = st
		m.order = append(m.order, s.Source)
	}
	if s.Partial {
		st.addLocations(s.Locations)
	} else {
		st.locations = s.Locations
		st.seen = true
	}
	var problems []Problem
	var removed, added, updated, deleted, reconciled []*corev1.Pod

	incoming := make(map[types.UID]bool, len(s.Pods))
	pods := make([]*corev1.Pod, 0, len(s.Pods))
	for _, pod := range s.Pods {
		switch {
		case pod.UID == "":
			problems = append(problems, m.problem(s.Source, st, pod, fmt.Errorf("%w: pod has no UID", ErrInvalid)))
		case incoming[pod.UID]:
			problems = append(problems, m.problem(s.Source, st, pod, fmt.Errorf("%w: UID %s appears twice in one snapshot", ErrInvalid, pod.UID)))
		default:
			incoming[pod.UID] = true
			pods = append(pods, pod)
		}
	}

	released := false
	remove := func(uid types.UID, mp *mergedPod) {
		removed = append(removed, mp.out)
		released = m.release(mp) || released
		delete(st.pods, uid)
	}
	var waiting []*corev1.Pod
	if s.Partial {
		var gone map[types.UID]bool
		if len(st.waiting) > 0 && len(s.Deleted) > 0 {
			gone = make(map[types.UID]bool, len(s.Deleted))
		}
		for _, uid := range s.Deleted {
			if incoming[uid] {
				continue // present after all
			}
			if gone != nil {
				gone[uid] = true
			}
			if mp, ok := st.pods[uid]; ok {
				remove(uid, mp)
			}
		}
		// Waiting pods this snapshot does not mention keep waiting, ahead of any it adds; the
		// ones it names are decided again below.
		for _, pod := range st.waiting {
			if !incoming[pod.UID] && !gone[pod.UID] {
				waiting = append(waiting, pod)
			}
		}
	} else {
		for uid, mp := range st.pods {
			if !incoming[uid] {
				remove(uid, mp)
			}
		}
	}
	sortPods(removed)

	for _, pod := range pods {
		mp, known := st.pods[pod.UID]
		if known && mp.in == pod {
			continue // the very same object: nothing can have changed
		}
		if known && mp.claim != claimName(pod) {
			// Only a static pod whose manifest sets its UID can be renamed; treat it as a
			// removal and a new pod.
			remove(pod.UID, mp)
			known = false
		}
		if !known {
			name := claimName(pod)
			if name != "" {
				if holder, taken := m.names[name]; taken {
					waiting = append(waiting, pod)
					if !st.reported[pod.UID] {
						st.reported[pod.UID] = true
						problems = append(problems, m.problem(s.Source, st, pod, fmt.Errorf(
							"%w: %s is already taken by the pod with UID %s from the %s source; this pod (UID %s) is ignored until that one is gone",
							ErrDuplicateName, podutil.FullName(pod), holder.uid, holder.source, pod.UID)))
					}
					continue
				}
				m.names[name] = nameClaim{source: s.Source, uid: pod.UID}
			}
			out := stamp(pod, s.Source, "")
			st.pods[pod.UID] = &mergedPod{in: pod, out: out, claim: name}
			added = append(added, out)
			continue
		}
		op, changed := classify(mp.out, pod)
		mp.in = pod
		if !changed {
			continue
		}
		mp.out = stamp(pod, s.Source, mp.out.Annotations[podutil.ConfigFirstSeenAnnotationKey])
		switch op {
		case UPDATE:
			updated = append(updated, mp.out)
		case DELETE:
			deleted = append(deleted, mp.out)
		case RECONCILE:
			reconciled = append(reconciled, mp.out)
		}
	}
	st.waiting = waiting
	st.forgetReportsExcept(waiting)

	var updates []PodUpdate
	for _, u := range []PodUpdate{
		{Op: REMOVE, Pods: removed}, {Op: ADD, Pods: added}, {Op: UPDATE, Pods: updated},
		{Op: DELETE, Pods: deleted}, {Op: RECONCILE, Pods: reconciled},
	} {
		if len(u.Pods) > 0 {
			u.Source = s.Source
			updates = append(updates, u)
		}
	}
	if released {
		updates = append(updates, m.admitWaiting()...)
	}
	if !s.Partial && st.unreadableChanged(s.Unreadable) {
		// First, so that a consumer knows which pods to keep before it acts on any removal.
		updates = append([]PodUpdate{{Op: RECONCILE, Source: s.Source, Unreadable: st.unreadable}}, updates...)
	}
	return updates, problems
}

// unreadableChanged records a full snapshot's unreadable locations and reports whether they
// differ from the previous ones (none before the first snapshot).
func (st *sourceState) unreadableChanged(locations []string) bool {
	set := make(map[string]bool, len(locations))
	for _, l := range locations {
		set[l] = true
	}
	if maps.Equal(set, st.unreadable) {
		return false
	}
	st.unreadable = set
	return true
}

// addLocations adds a partial snapshot's locations to the merger's own copy (a full snapshot's
// map belongs to its sender and is never written to).
func (st *sourceState) addLocations(locations map[types.UID]string) {
	if len(locations) == 0 {
		return
	}
	merged := make(map[types.UID]string, len(st.locations)+len(locations))
	for uid, l := range st.locations {
		merged[uid] = l
	}
	for uid, l := range locations {
		merged[uid] = l
	}
	st.locations = merged
}

// admitWaiting admits waiting pods whose names have been released, in source order.
func (m *Merger) admitWaiting() []PodUpdate {
	var updates []PodUpdate
	for _, source := range m.order {
		st := m.sources[source]
		var added, still []*corev1.Pod
		for _, pod := range st.waiting {
			name := claimName(pod)
			if _, taken := m.names[name]; taken {
				still = append(still, pod)
				continue
			}
			m.names[name] = nameClaim{source: source, uid: pod.UID}
			out := stamp(pod, source, "")
			st.pods[pod.UID] = &mergedPod{in: pod, out: out, claim: name}
			added = append(added, out)
			delete(st.reported, pod.UID)
		}
		st.waiting = still
		if len(added) > 0 {
			updates = append(updates, PodUpdate{Op: ADD, Source: source, Pods: added})
		}
	}
	return updates
}

// release gives up mp's name; it reports whether a name was released.
func (m *Merger) release(mp *mergedPod) bool {
	if mp.claim == "" {
		return false
	}
	if c, ok := m.names[mp.claim]; ok && c.uid == mp.in.UID {
		delete(m.names, mp.claim)
		return true
	}
	return false
}

func (m *Merger) problem(source string, st *sourceState, pod *corev1.Pod, err error) Problem {
	location := st.locations[pod.UID]
	if location == "" {
		location = podutil.FullName(pod)
	}
	return Problem{Source: source, Location: location, Err: err}
}

func (st *sourceState) forgetReportsExcept(waiting []*corev1.Pod) {
	if len(st.reported) == 0 {
		return
	}
	keep := make(map[types.UID]bool, len(waiting))
	for _, pod := range waiting {
		if st.reported[pod.UID] {
			keep[pod.UID] = true
		}
	}
	st.reported = keep
}

// claimName is the full name a pod claims, or "" for a mirror pod (it shares its static pod's).
func claimName(pod *corev1.Pod) string {
	if podutil.IsMirrorPod(pod) {
		return ""
	}
	return podutil.FullName(pod)
}

// classify says how the pod changed from what was last emitted (old) to what arrived (cur).
func classify(old, cur *corev1.Pod) (Op, bool) {
	if old.ResourceVersion != "" && old.ResourceVersion == cur.ResourceVersion {
		return 0, false // the API server's own "nothing changed"
	}
	gracefulDelete := cur.DeletionTimestamp != nil &&
		(old.DeletionTimestamp == nil || !equality.Semantic.DeepEqual(old.DeletionGracePeriodSeconds, cur.DeletionGracePeriodSeconds))
	if gracefulDelete {
		return DELETE, true
	}
	if !sameEncoding(&old.Spec, &cur.Spec) ||
		!equality.Semantic.DeepEqual(old.Labels, cur.Labels) ||
		!annotationsEqual(old.Annotations, cur.Annotations) ||
		!equality.Semantic.DeepEqual(old.OwnerReferences, cur.OwnerReferences) ||
		!equality.Semantic.DeepEqual(old.DeletionTimestamp, cur.DeletionTimestamp) ||
		!equality.Semantic.DeepEqual(old.DeletionGracePeriodSeconds, cur.DeletionGracePeriodSeconds) {
		return UPDATE, true
	}
	if !sameEncoding(&old.Status, &cur.Status) {
		return RECONCILE, true
	}
	return 0, false
}

// sameEncoding compares a pod's spec or status by its protobuf encoding: deterministic (map
// keys sorted) and without reflection, where equality.Semantic.DeepEqual of every watch
// event's spec and status was the merger's largest cost at 1000 pods starting
// (docs/performance.md, "Closing the gaps to the floor"). Nil and empty lists encode alike;
// a difference Semantic would not see (a quantity written in another form) classifies an
// event as a change, which the pod controller finds to be none.
func sameEncoding(a, b interface{ Marshal() ([]byte, error) }) bool {
	ab, errA := a.Marshal()
	bb, errB := b.Marshal()
	if errA != nil || errB != nil {
		return equality.Semantic.DeepEqual(a, b)
	}
	return bytes.Equal(ab, bb)
}

// annotationsEqual compares annotations except the ones the agent itself maintains.
func annotationsEqual(a, b map[string]string) bool {
	ignored := func(k string) bool {
		return k == podutil.ConfigFirstSeenAnnotationKey || k == podutil.ConfigSourceAnnotationKey
	}
	count := func(m map[string]string) int {
		n := 0
		for k := range m {
			if !ignored(k) {
				n++
			}
		}
		return n
	}
	if count(a) != count(b) {
		return false
	}
	for k, v := range a {
		if ignored(k) {
			continue
		}
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// stamp returns pod with config.source = source and, when seen is not empty, config.seen = seen.
// The source's object is never modified: a changed pod is a shallow copy with its own
// annotations (pods are read-only, so sharing the rest is safe).
func stamp(pod *corev1.Pod, source, seen string) *corev1.Pod {
	if pod.Annotations[podutil.ConfigSourceAnnotationKey] == source &&
		(seen == "" || pod.Annotations[podutil.ConfigFirstSeenAnnotationKey] == seen) {
		return pod
	}
	out := *pod
	out.Annotations = make(map[string]string, len(pod.Annotations)+2)
	for k, v := range pod.Annotations {
		out.Annotations[k] = v
	}
	out.Annotations[podutil.ConfigSourceAnnotationKey] = source
	if seen != "" {
		out.Annotations[podutil.ConfigFirstSeenAnnotationKey] = seen
	}
	return &out
}

func sortPods(pods []*corev1.Pod) {
	sort.Slice(pods, func(i, j int) bool {
		if a, b := podutil.FullName(pods[i]), podutil.FullName(pods[j]); a != b {
			return a < b
		}
		return pods[i].UID < pods[j].UID
	})
}
