package node

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vk-static/vk-static/podstatus"
)

// providerPod is what the controller knows about the one pod the provider runs under a full
// name. The provider keys pods by namespace/name, so there is at most one per full name: an
// edited static pod (new UID) is created only after the old one has terminated.
//
// It holds no copy of the pod: at 10,000 pods a copy per pod was a sixth of the agent's heap.
// What "changed" compares to is a digest of the spec, labels and annotations the provider was
// given (specdigest.go).
type providerPod struct {
	// meta is the identity of what the provider was last given (CreatePod/UpdatePod), or of
	// what it reported at start-up: name, namespace, UID and annotations (shared, read-only).
	// meta.UID is the running UID.
	meta metav1.ObjectMeta
	// terminationGracePeriodSeconds as given (shared, read-only).
	terminationGracePeriodSeconds *int64
	// given is the digest of the spec, labels and annotations the provider was given.
	given specDigest
	// status is the newest status the provider reported for meta.UID (nil until the first).
	// Shared with the provider, which may not modify a pod it has passed on (PodNotifier).
	status *corev1.PodStatus
	// state is where the pod is in its life with the provider; deadline, while it is
	// terminating, is when its grace period (plus slack) runs out.
	state    podWorkState
	deadline time.Time
}

// podWorkState is the controller's state machine for one provider pod, the kubelet's pod
// workers' (SyncPod, TerminatingPod, TerminatedPod in pkg/kubelet/pod_workers.go):
//
//	podSyncing ──DeletePod──► podTerminating ──finished, forgotten or grace over──► podTerminated
//	    └───────────────provider no longer has it──────────────────────────────────────┘
//
// A terminated pod is forgotten by the next sync (after an API pod's terminal status is
// written), which frees its full name for the next pod.
type podWorkState int

const (
	// podSyncing: the provider runs the pod; a changed spec is passed on by UpdatePod.
	podSyncing podWorkState = iota
	// podTerminating: DeletePod was called; the pod has until deadline to finish.
	podTerminating
	// podTerminated: the provider reported it finished or forgot it, or its grace period ran
	// out.
	podTerminated
)

// trackPod is the state of pod as given to the provider.
func trackPod(pod *corev1.Pod) providerPod {
	return providerPod{
		meta:                          metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID, Annotations: pod.Annotations},
		terminationGracePeriodSeconds: pod.Spec.TerminationGracePeriodSeconds,
		given:                         digestSpec(pod),
	}
}

// uid is the UID of the pod the provider runs.
func (p providerPod) uid() types.UID { return p.meta.UID }

// ref is a pod that carries only what identifies the running pod: enough to name it in an
// event, find its mirror, or ask the provider about it.
func (p providerPod) ref() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: p.meta,
		Spec:       corev1.PodSpec{TerminationGracePeriodSeconds: p.terminationGracePeriodSeconds},
	}
}

// podStates holds a providerPod per full name. Workers own a key while they sync it (the work
// queue guarantees one worker per key); the provider's notifications update status
// concurrently, hence the lock. Values returned are copies.
type podStates struct {
	mu sync.Mutex
	m  map[string]*providerPod
}

func newPodStates() *podStates {
	return &podStates{m: make(map[string]*providerPod, 128)}
}

// get returns a copy of the state under key (its pointers are shared and read-only).
func (s *podStates) get(key string) (providerPod, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.m[key]
	if !ok {
		return providerPod{}, false
	}
	return *st, true
}

func (s *podStates) set(key string, st providerPod) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[key] = &st
}

// updated records what the provider was given by UpdatePod, keeping the rest of the state
// (a status notified meanwhile included).
func (s *podStates) updated(key string, given providerPod) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.m[key]; ok && st.uid() == given.uid() {
		st.meta, st.terminationGracePeriodSeconds, st.given = given.meta, given.terminationGracePeriodSeconds, given.given
	}
}

func (s *podStates) forget(key string, uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.m[key]; ok && st.uid() == uid {
		delete(s.m, key)
	}
}

// markTerminating records that DeletePod was called for uid, which has until deadline.
func (s *podStates) markTerminating(key string, uid types.UID, deadline time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.m[key]; ok && st.uid() == uid && st.state == podSyncing {
		st.state, st.deadline = podTerminating, deadline
	}
}

func (s *podStates) markTerminated(key string, uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.m[key]; ok && st.uid() == uid {
		st.state = podTerminated
	}
}

// observe records a status the provider reported for uid. It reports whether the key needs a
// sync (a terminating pod finished: it is terminated) and whether the status is for the pod the
// controller tracks at all (notifications for an older UID are dropped).
func (s *podStates) observe(key string, uid types.UID, status *corev1.PodStatus) (tracked, needsSync bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.m[key]
	if !ok || st.uid() != uid {
		return false, false
	}
	st.status = status
	if st.state == podTerminating && podstatus.Finished(status) {
		st.state = podTerminated
		return true, true
	}
	return true, false
}

func (s *podStates) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

func (s *podStates) keys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]string, 0, len(s.m))
	for k := range s.m {
		keys = append(keys, k)
	}
	return keys
}
