package podmanager

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vk-static/vk-static/mirror"
	"github.com/vk-static/vk-static/podutil"
)

// ErrNoMirrorClient is wrapped by CreateMirrorPod and DeleteMirrorPod of a Manager built
// without a mirror client (standalone mode: no API server, so no mirrors).
var ErrNoMirrorClient = errors.New("no mirror client: running without an API server")

// basicManager is the Manager. Every map is guarded by mu; the mirror client is called without
// it, so readers never wait on the API server.
type basicManager struct {
	mu sync.RWMutex
	// pods holds the regular pods (static and API) by UID; podNames indexes them by full name.
	pods     map[types.UID]*corev1.Pod
	podNames nameIndex
	// mirrors holds the mirror pods by UID; mirrorNames indexes them by full name.
	mirrors     map[types.UID]*corev1.Pod
	mirrorNames nameIndex
	// staticOf maps a mirror UID to the UID of the static pod it is a current mirror of. An
	// entry lives as long as the mirror, even after the static pod is removed.
	staticOf map[types.UID]types.UID

	mirror.Client
}

// NewBasicPodManager returns an empty Manager whose mirror methods use client. client may be
// nil (standalone mode): the mirror methods then return an error wrapping ErrNoMirrorClient.
func NewBasicPodManager(client mirror.Client) Manager {
	if client == nil {
		client = noMirrorClient{}
	}
	m := &basicManager{Client: client}
	m.resetLocked()
	return m
}

func (m *basicManager) resetLocked() {
	m.pods = make(map[types.UID]*corev1.Pod)
	m.podNames = make(nameIndex)
	m.mirrors = make(map[types.UID]*corev1.Pod)
	m.mirrorNames = make(nameIndex)
	m.staticOf = make(map[types.UID]types.UID)
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
	name := podutil.FullName(pod)
	if old, ok := m.pods[pod.UID]; ok && podutil.FullName(old) != name {
		m.podNames.remove(podutil.FullName(old), pod.UID)
	}
	m.pods[pod.UID] = pod
	m.podNames.add(name, pod.UID)

	mirrorPod, ok := m.mirrorByNameLocked(name)
	if !ok || !podutil.IsStaticPod(pod) {
		return
	}
	switch {
	case mirror.IsMirrorOf(mirrorPod, pod):
		m.staticOf[mirrorPod.UID] = pod.UID
	case m.staticOf[mirrorPod.UID] == pod.UID:
		// The same static pod changed hash in place; its old mirror no longer stands for it.
		delete(m.staticOf, mirrorPod.UID)
	}
}

func (m *basicManager) updateMirrorLocked(mirrorPod *corev1.Pod) {
	name := podutil.FullName(mirrorPod)
	old, existed := m.mirrors[mirrorPod.UID]
	if existed && podutil.FullName(old) != name {
		m.mirrorNames.remove(podutil.FullName(old), mirrorPod.UID)
	}
	m.mirrors[mirrorPod.UID] = mirrorPod
	m.mirrorNames.add(name, mirrorPod.UID)

	if static, ok := m.podByNameLocked(name); ok && podutil.IsStaticPod(static) && mirror.IsMirrorOf(mirrorPod, static) {
		m.staticOf[mirrorPod.UID] = static.UID
		return
	}
	// No current static pod for it: keep a translation to a removed static pod unless the
	// mirror now claims another identity.
	if existed && (podutil.FullName(old) != name || podutil.MirrorHash(old) != podutil.MirrorHash(mirrorPod)) {
		delete(m.staticOf, mirrorPod.UID)
	}
}

func (m *basicManager) DeletePod(pod *corev1.Pod) {
	m.mu.Lock()
	defer m.mu.Unlock()
	// Trust what is stored over the argument, which may be an older copy of the object.
	if stored, ok := m.mirrors[pod.UID]; ok {
		delete(m.mirrors, pod.UID)
		m.mirrorNames.remove(podutil.FullName(stored), pod.UID)
		delete(m.staticOf, pod.UID)
		return
	}
	if stored, ok := m.pods[pod.UID]; ok {
		delete(m.pods, pod.UID)
		m.podNames.remove(podutil.FullName(stored), pod.UID)
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
	pod, ok := m.pods[uid]
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
	for name := range m.mirrorNames {
		if _, ok := m.podNames[name]; !ok {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

func (m *basicManager) TranslatePodUID(uid types.UID) types.UID {
	if uid == "" {
		return uid
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if static, ok := m.staticOf[uid]; ok {
		return static
	}
	return uid
}

func (m *basicManager) GetUIDTranslations() (podToMirror, mirrorToPod map[types.UID]types.UID) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	podToMirror = make(map[types.UID]types.UID, len(m.pods))
	mirrorToPod = make(map[types.UID]types.UID, len(m.staticOf))
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

func (m *basicManager) isNewestMirrorLocked(mirrorUID types.UID) bool {
	pod, ok := m.mirrors[mirrorUID]
	if !ok {
		return false
	}
	current, _ := m.mirrorNames.current(podutil.FullName(pod))
	return current == mirrorUID
}

func values(byUID map[types.UID]*corev1.Pod) []*corev1.Pod {
	out := make([]*corev1.Pod, 0, len(byUID))
	for _, pod := range byUID {
		out = append(out, pod)
	}
	return out
}

// noMirrorClient is the mirror client of a standalone Manager.
type noMirrorClient struct{}

func (noMirrorClient) CreateMirrorPod(context.Context, *corev1.Pod) error {
	return fmt.Errorf("create mirror pod: %w", ErrNoMirrorClient)
}

func (noMirrorClient) DeleteMirrorPod(_ context.Context, podFullName string, _ *types.UID) (bool, error) {
	return false, fmt.Errorf("delete mirror pod %s: %w", podFullName, ErrNoMirrorClient)
}
