package podmanager

import (
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vk-static/vk-static/mirror"
	"github.com/vk-static/vk-static/podutil"
)

// ResolvedPodUID is the UID of a pod the agent runs: a regular pod's own UID (a static pod's or
// an API pod's), the UID the provider is given. It is what TranslatePodUID turns a mirror UID
// into.
type ResolvedPodUID types.UID

// MirrorPodUID is the UID of a mirror pod: the API server's object that shows a static pod,
// never a pod the agent runs (TranslatePodUID gives the static pod's UID for it).
//
// The two are distinct types, as in the kubelet, because both are types.UID underneath and
// both are at hand wherever static pods are handled: a swap (a mirror UID used as the pod's,
// or a map of one kind read with the other) compiles as types.UID and fails only at run time,
// often silently, as a lookup that finds nothing.
type MirrorPodUID types.UID

// Manager stores the pods bound to this agent and the mirror pods of its static pods, and
// translates between a static pod's UID and its mirror's UID.
//
// Pods from the file and HTTP sources are static pods: the API server does not know them, so
// the agent keeps a mirror pod for each (same name and namespace, another UID). Mirror pods are
// recognised by the kubernetes.io/config.mirror annotation; every other pod is a regular pod
// (static or from the API server). A static pod and its mirror are paired by full name
// ("name_namespace"); IsMirrorPodOf says whether the pair is current (same hash).
//
// A Manager is safe for concurrent use. It holds pods in memory only: no method blocks on the
// API server except the embedded mirror.Client's, which never hold the Manager's lock. Pods
// handed to the Manager become its own and must not be modified afterwards; pods it returns
// are shared and read-only (DeepCopy before changing one). Slices returned are fresh and in no
// particular order; maps returned are fresh copies.
type Manager interface {
	// GetPods returns the regular pods (static and API), not mirrors.
	GetPods() []*corev1.Pod
	// GetPodByFullName returns the regular pod with this full name ("name_namespace").
	GetPodByFullName(podFullName string) (*corev1.Pod, bool)
	// GetPodByName returns the regular pod with this namespace and name.
	GetPodByName(namespace, name string) (*corev1.Pod, bool)
	// GetPodByUID returns the regular pod with this UID (a mirror UID finds nothing: translate
	// it first with TranslatePodUID).
	GetPodByUID(uid types.UID) (*corev1.Pod, bool)
	// GetPodByMirrorPod returns the regular pod with the mirror's full name — the static pod
	// it stands for, whether or not its hash is current (check with IsMirrorPodOf).
	GetPodByMirrorPod(mirrorPod *corev1.Pod) (*corev1.Pod, bool)
	// GetMirrorPodByPod returns the mirror pod with the pod's full name, whether or not its hash
	// is current: after an edit (new UID, same full name) it is still the old mirror, which is
	// how the caller learns that the mirror must be recreated.
	GetMirrorPodByPod(pod *corev1.Pod) (*corev1.Pod, bool)
	// GetPodsAndMirrorPods returns the regular pods and the mirror pods.
	GetPodsAndMirrorPods() (pods, mirrorPods []*corev1.Pod)
	// SetPods replaces everything the Manager holds (regular and mirror pods, translations)
	// with pods.
	SetPods(pods []*corev1.Pod)
	// AddPod adds a regular or mirror pod; it is UpdatePod.
	AddPod(pod *corev1.Pod)
	// UpdatePod adds or replaces a regular or mirror pod, keyed by UID.
	UpdatePod(pod *corev1.Pod)
	// DeletePod removes a regular or mirror pod, by UID. Removing a static pod keeps the
	// translation to its mirror until the mirror is removed too, so requests and status for
	// that mirror still reach the static pod while it terminates.
	DeletePod(pod *corev1.Pod)
	// GetOrphanedMirrorPodNames returns the full names of mirror pods with no regular pod of
	// the same full name, sorted.
	GetOrphanedMirrorPodNames() []string
	// TranslatePodUID returns the static pod's UID for a mirror pod's UID, and any other UID
	// unchanged. uid is a types.UID, not a MirrorPodUID, because callers (requests naming a
	// pod) do not know which kind they hold; the result is known to be resolved.
	TranslatePodUID(uid types.UID) ResolvedPodUID
	// GetUIDTranslations returns static UID → mirror UID (every static pod the Manager holds,
	// with "" when it has no current mirror, plus removed static pods whose mirror remains) and
	// mirror UID → static UID.
	GetUIDTranslations() (podToMirror map[ResolvedPodUID]MirrorPodUID, mirrorToPod map[MirrorPodUID]ResolvedPodUID)
	// IsMirrorPodOf reports whether mirrorPod is a current mirror of pod: same full name and
	// config.mirror equal to pod's config.hash (never the spec). See mirror.IsMirrorOf.
	IsMirrorPodOf(mirrorPod, pod *corev1.Pod) bool
}

// The basic manager is the Manager, and also node.DesiredPods (asserted in package node, which
// imports this one).
var _ Manager = (*basicManager)(nil)

// basicManager is the Manager. Every map is guarded by mu. The maps are keyed by UID kind: a types.UID
// becomes a ResolvedPodUID or a MirrorPodUID once, where a pod enters (updateRegularLocked,
// updateMirrorLocked) or a caller's UID is looked up, and past that the compiler keeps a
// mirror's UID out of the regular pods' maps and the other way round.
type basicManager struct {
	mu sync.RWMutex
	// pods holds the regular pods (static and API) by UID; podNames indexes them by full name.
	pods     map[ResolvedPodUID]*corev1.Pod
	podNames nameIndex[ResolvedPodUID]
	// mirrors holds the mirror pods by UID; mirrorNames indexes them by full name.
	mirrors     map[MirrorPodUID]*corev1.Pod
	mirrorNames nameIndex[MirrorPodUID]
	// staticOf maps a mirror UID to the UID of the static pod it is a current mirror of. An
	// entry lives as long as the mirror, even after the static pod is removed.
	staticOf map[MirrorPodUID]ResolvedPodUID
}

// NewBasicPodManager returns an empty Manager. It holds pods and does no I/O: mirror pods are
// written by a mirror.Client of the caller's (the pod controller's), as the kubelet's
// NewBasicPodManager takes no client since v1.36.
func NewBasicPodManager() Manager {
	m := &basicManager{}
	m.resetLocked()
	return m
}

func (m *basicManager) resetLocked() {
	m.pods = make(map[ResolvedPodUID]*corev1.Pod)
	m.podNames = newNameIndex[ResolvedPodUID]()
	m.mirrors = make(map[MirrorPodUID]*corev1.Pod)
	m.mirrorNames = newNameIndex[MirrorPodUID]()
	m.staticOf = make(map[MirrorPodUID]ResolvedPodUID)
}

func (m *basicManager) SetPods(pods []*corev1.Pod) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.resetLocked()
	for _, pod := range pods {
		m.updateLocked(pod)
	}
}

func (m *basicManager) AddPod(pod *corev1.Pod) { m.UpdatePod(pod) }

func (m *basicManager) UpdatePod(pod *corev1.Pod) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.updateLocked(pod)
}

func (m *basicManager) updateLocked(pod *corev1.Pod) {
	if podutil.IsMirrorPod(pod) {
		m.updateMirrorLocked(pod)
		return
	}
	m.updateRegularLocked(pod)
}

func (m *basicManager) updateRegularLocked(pod *corev1.Pod) {
	uid := ResolvedPodUID(pod.UID)
	name := podutil.FullName(pod)
	if old, ok := m.pods[uid]; ok && podutil.FullName(old) != name {
		m.podNames.remove(podutil.FullName(old), uid)
	}
	m.pods[uid] = pod
	m.podNames.add(name, uid)

	mirrorPod, ok := m.mirrorByNameLocked(name)
	if !ok || !podutil.IsStaticPod(pod) {
		return
	}
	mirrorUID := MirrorPodUID(mirrorPod.UID)
	switch {
	case mirror.IsMirrorOf(mirrorPod, pod):
		m.staticOf[mirrorUID] = uid
	case m.staticOf[mirrorUID] == uid:
		// The same static pod changed hash in place; its old mirror no longer stands for it.
		delete(m.staticOf, mirrorUID)
	}
}

func (m *basicManager) updateMirrorLocked(mirrorPod *corev1.Pod) {
	uid := MirrorPodUID(mirrorPod.UID)
	name := podutil.FullName(mirrorPod)
	old, existed := m.mirrors[uid]
	if existed && podutil.FullName(old) != name {
		m.mirrorNames.remove(podutil.FullName(old), uid)
	}
	m.mirrors[uid] = mirrorPod
	m.mirrorNames.add(name, uid)

	if static, ok := m.podByNameLocked(name); ok && podutil.IsStaticPod(static) && mirror.IsMirrorOf(mirrorPod, static) {
		m.staticOf[uid] = ResolvedPodUID(static.UID)
		return
	}
	// No current static pod for it: keep a translation to a removed static pod unless the
	// mirror now claims another identity.
	if existed && (podutil.FullName(old) != name || podutil.MirrorHash(old) != podutil.MirrorHash(mirrorPod)) {
		delete(m.staticOf, uid)
	}
}

func (m *basicManager) DeletePod(pod *corev1.Pod) {
	m.mu.Lock()
	defer m.mu.Unlock()
	// Trust what is stored over the argument, which may be an older copy of the object: the
	// map that holds the UID says which kind it is, not the argument's annotations.
	mirrorUID, podUID := MirrorPodUID(pod.UID), ResolvedPodUID(pod.UID)
	if stored, ok := m.mirrors[mirrorUID]; ok {
		delete(m.mirrors, mirrorUID)
		m.mirrorNames.remove(podutil.FullName(stored), mirrorUID)
		delete(m.staticOf, mirrorUID)
		return
	}
	if stored, ok := m.pods[podUID]; ok {
		delete(m.pods, podUID)
		m.podNames.remove(podutil.FullName(stored), podUID)
	}
}

func (m *basicManager) GetPods() []*corev1.Pod {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return values(m.pods)
}

func (m *basicManager) GetPodsAndMirrorPods() (pods, mirrorPods []*corev1.Pod) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return values(m.pods), values(m.mirrors)
}

func (m *basicManager) GetPodByUID(uid types.UID) (*corev1.Pod, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	pod, ok := m.pods[ResolvedPodUID(uid)]
	return pod, ok
}

func (m *basicManager) GetPodByName(namespace, name string) (*corev1.Pod, bool) {
	return m.GetPodByFullName(podutil.BuildFullName(name, namespace))
}

func (m *basicManager) GetPodByFullName(podFullName string) (*corev1.Pod, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.podByNameLocked(podFullName)
}

func (m *basicManager) GetPodByMirrorPod(mirrorPod *corev1.Pod) (*corev1.Pod, bool) {
	return m.GetPodByFullName(podutil.FullName(mirrorPod))
}

func (m *basicManager) GetMirrorPodByPod(pod *corev1.Pod) (*corev1.Pod, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.mirrorByNameLocked(podutil.FullName(pod))
}

func (m *basicManager) GetOrphanedMirrorPodNames() []string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var names []string
	for name := range m.mirrorNames.newest {
		if !m.podNames.has(name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

func (m *basicManager) TranslatePodUID(uid types.UID) ResolvedPodUID {
	if uid == "" {
		return ""
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if static, ok := m.staticOf[MirrorPodUID(uid)]; ok {
		return static
	}
	// Not a mirror this Manager pairs with a static pod: the UID is its own pod's.
	return ResolvedPodUID(uid)
}

func (m *basicManager) GetUIDTranslations() (podToMirror map[ResolvedPodUID]MirrorPodUID, mirrorToPod map[MirrorPodUID]ResolvedPodUID) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	podToMirror = make(map[ResolvedPodUID]MirrorPodUID, len(m.pods))
	mirrorToPod = make(map[MirrorPodUID]ResolvedPodUID, len(m.staticOf))
	for uid, pod := range m.pods {
		if podutil.IsStaticPod(pod) {
			podToMirror[uid] = ""
		}
	}
	for mirrorUID, staticUID := range m.staticOf {
		mirrorToPod[mirrorUID] = staticUID
		// Two mirrors can stand for one static pod only while a recreation is being observed
		// out of order; the newest holder of the name wins so the answer is deterministic.
		if prev := podToMirror[staticUID]; prev != "" && !m.isNewestMirrorLocked(mirrorUID) {
			continue
		}
		podToMirror[staticUID] = mirrorUID
	}
	return podToMirror, mirrorToPod
}

func (m *basicManager) IsMirrorPodOf(mirrorPod, pod *corev1.Pod) bool {
	return mirror.IsMirrorOf(mirrorPod, pod)
}

func (m *basicManager) podByNameLocked(fullName string) (*corev1.Pod, bool) {
	uid, ok := m.podNames.current(fullName)
	if !ok {
		return nil, false
	}
	return m.pods[uid], true
}

func (m *basicManager) mirrorByNameLocked(fullName string) (*corev1.Pod, bool) {
	uid, ok := m.mirrorNames.current(fullName)
	if !ok {
		return nil, false
	}
	return m.mirrors[uid], true
}

func (m *basicManager) isNewestMirrorLocked(mirrorUID MirrorPodUID) bool {
	pod, ok := m.mirrors[mirrorUID]
	if !ok {
		return false
	}
	current, _ := m.mirrorNames.current(podutil.FullName(pod))
	return current == mirrorUID
}

func values[U ResolvedPodUID | MirrorPodUID](byUID map[U]*corev1.Pod) []*corev1.Pod {
	out := make([]*corev1.Pod, 0, len(byUID))
	for _, pod := range byUID {
		out = append(out, pod)
	}
	return out
}
