package podmanager

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vk-static/vk-static/mirror"
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

	// mirror.Client writes mirror pods to the API server. With no client (standalone mode)
	// both methods return an error wrapping ErrNoMirrorClient.
	mirror.Client
}
