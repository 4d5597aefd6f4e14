// knownpods.go holds what the pod controller knows of each pod it gave the provider (knownPod),
// keyed by full name (knownPods): what it was given, whether its deletion was sent, whether it is
// gone — as virtual-kubelet's knownPod records what was given to the provider and what it
// reported. These are the controller's words, not the kubelet's pod-worker states, which the
// lifecycle (the provider side) has.

package node

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vk-static/vk-static/podstatus"
)

// knownPod is what the controller knows about the one pod the provider runs under a full
// name. The provider keys pods by namespace/name, so there is at most one per full name: an
// edited static pod (new UID) is created only after the old one has terminated.
//
// It holds no copy of the pod: at 10,000 pods a copy per pod was a sixth of the agent's heap.
// What "changed" compares to is a digest of the spec, labels and annotations the provider was
// given ([digestSpec]).
type knownPod struct {
	// meta is the identity of what the provider was last given (CreatePod/UpdatePod), or of
	// what it reported at start-up: name, namespace, UID and annotations (shared, read-only).
	// meta.UID is the running UID.
	meta podMeta
	// terminationGracePeriodSeconds as given (shared, read-only).
	terminationGracePeriodSeconds *int64
	// given is the digest of the spec, labels and annotations the provider was given.
	given specDigest
	// status is the newest status the provider reported for meta.UID (nil until the first):
	// the controller's copy of the status struct, made once per report (ownStatus), whose
	// slices, maps and pointers are the provider's, which may not modify a pod it has passed on
	// (PodNotifier). The status writer tells a report it has handled by this pointer.
	status *corev1.PodStatus
	// state is where the pod is in its life with the provider; deadline, while it is
	// terminating, is when its grace period (plus slack) runs out.
	state    knownState
	deadline time.Time
}

// podMeta is what knownPod keeps of a pod's metadata: the four fields it reads of the
// 232 B metav1.ObjectMeta (about 170 B a pod less at api-1k), named as there.
type podMeta struct {
	Name, Namespace string
	UID             types.UID
	Annotations     map[string]string
}

// knownState is what the controller knows of one pod it gave the provider, in its own words
// (the provider side, the lifecycle, has the kubelet's pod-worker states):
//
//	podGiven ──DeletePod sent──► podDeleteSent ──finished, forgotten or grace over──► podGone
//	    └──────────────────provider no longer has it──────────────────────────────────────┘
//
// A gone pod is forgotten by the next sync (after an API pod's terminal status is written),
// which frees its full name for the next pod.
type knownState int

// trackPod is the state of pod as given to the provider.
func trackPod(pod *corev1.Pod) knownPod {
	return knownPod{
		meta:                          podMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID, Annotations: pod.Annotations},
		terminationGracePeriodSeconds: pod.Spec.TerminationGracePeriodSeconds,
		given:                         digestSpec(pod),
	}
}

// uid is the UID of the pod the provider runs.
func (p knownPod) uid() types.UID { return p.meta.UID }

// ref is a pod that carries only what identifies the running pod: enough to name it in an
// event, find its mirror, or ask the provider about it.
func (p knownPod) ref() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: p.meta.Name, Namespace: p.meta.Namespace, UID: p.meta.UID, Annotations: p.meta.Annotations},
		Spec:       corev1.PodSpec{TerminationGracePeriodSeconds: p.terminationGracePeriodSeconds},
	}
}

// knownPods holds a knownPod per full name. Workers own a key while they sync it (the work
// queue guarantees one worker per key); the provider's notifications update status
// concurrently, hence the lock. Values returned are copies.
type knownPods struct {
	mu sync.Mutex
	m  map[string]*knownPod
}

func newKnownPods() *knownPods {
	return &knownPods{m: make(map[string]*knownPod, 128)}
}

// get returns a copy of the state under key (its pointers are shared and read-only).
func (s *knownPods) get(key string) (knownPod, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.m[key]
	if !ok {
		return knownPod{}, false
	}
	return *st, true
}

func (s *knownPods) set(key string, st knownPod) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[key] = &st
}

// updated records what the provider was given by UpdatePod, keeping the rest of the state
// (a status notified meanwhile included).
func (s *knownPods) updated(key string, given knownPod) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.m[key]; ok && st.uid() == given.uid() {
		st.meta, st.terminationGracePeriodSeconds, st.given = given.meta, given.terminationGracePeriodSeconds, given.given
	}
}

func (s *knownPods) forget(key string, uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.m[key]; ok && st.uid() == uid {
		delete(s.m, key)
	}
}

// markDeleteSent records that DeletePod was called for uid, which has until deadline.
func (s *knownPods) markDeleteSent(key string, uid types.UID, deadline time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.m[key]; ok && st.uid() == uid && st.state == podGiven {
		st.state, st.deadline = podDeleteSent, deadline
	}
}

func (s *knownPods) markGone(key string, uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.m[key]; ok && st.uid() == uid {
		st.state = podGone
	}
}

// observe records a status the provider reported for uid. It reports whether the key needs a
// sync (a terminating pod finished: it is terminated) and whether the status is for the pod the
// controller tracks at all (notifications for an older UID are dropped).
func (s *knownPods) observe(key string, uid types.UID, status *corev1.PodStatus) (tracked, needsSync bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.m[key]
	if !ok || st.uid() != uid {
		return false, false
	}
	st.status = ownStatus(status)
	if st.state == podDeleteSent && podstatus.Finished(status) {
		st.state = podGone
		return true, true
	}
	return true, false
}

// ownStatus is a copy of the provider's status struct, its slices, maps and pointers shared
// (read-only, PodNotifier). A pointer to the status inside the provider's pod would keep the
// whole pod alive for as long as the pod runs, spec and all: the mock provider keeps only a
// compact record of each pod, and the Pod it notifies is garbage once this copy is made
// (docs/performance.md, "Live heap per pod").
func ownStatus(s *corev1.PodStatus) *corev1.PodStatus {
	c := *s
	return &c
}

func (s *knownPods) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

func (s *knownPods) keys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]string, 0, len(s.m))
	for k := range s.m {
		keys = append(keys, k)
	}
	return keys
}

const (
	// podGiven: the provider was given the pod (CreatePod) and runs it; a changed spec is
	// passed on by UpdatePod.
	podGiven knownState = iota
	// podDeleteSent: DeletePod was called; the pod has until deadline to finish.
	podDeleteSent
	// podGone: the provider reported it finished or forgot it, or its grace period ran
	// out.
	podGone
)
