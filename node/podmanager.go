package node

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vk-static/vk-static/mirror"
	"github.com/vk-static/vk-static/podmanager"
)

// PodManager is the part of podmanager.Manager a PodController uses: its sync, resync, mirror
// and status paths call these methods and no others. It is declared here, where it is used, so
// that what the controller depends on is written down and a stand-in (a test's, another store)
// needs to provide only this. The methods mean what podmanager.Manager documents;
// podmanager.NewBasicPodManager satisfies it.
type PodManager interface {
	// AddPod, UpdatePod and DeletePod keep the manager current from the source updates.
	AddPod(pod *corev1.Pod)
	UpdatePod(pod *corev1.Pod)
	DeletePod(pod *corev1.Pod)

	// GetPodByFullName is the desired pod of a full name, for the sync and the resync.
	GetPodByFullName(podFullName string) (*corev1.Pod, bool)
	// GetMirrorPodByPod and GetPodsAndMirrorPods are what the mirror decision reads.
	GetMirrorPodByPod(pod *corev1.Pod) (*corev1.Pod, bool)
	GetPodsAndMirrorPods() (pods, mirrorPods []*corev1.Pod)

	// GetPodByUID, IsMirrorPodOf and TranslatePodUID choose the API object the status writer
	// patches: the API pod itself, or the static pod's mirror only while it translates back to
	// that very static pod.
	GetPodByUID(uid types.UID) (*corev1.Pod, bool)
	IsMirrorPodOf(mirrorPod, pod *corev1.Pod) bool
	TranslatePodUID(uid types.UID) podmanager.ResolvedPodUID

	// mirror.Client creates and deletes mirror pods (an error wrapping
	// podmanager.ErrNoMirrorClient in standalone mode, where the controller never calls it).
	mirror.Client
}

// PodLister is what Metrics reads at scrape time for the pods-by-source-and-phase gauge: the
// regular pods, as podmanager.Manager's GetPods returns them.
type PodLister interface {
	GetPods() []*corev1.Pod
}

// podmanager.NewBasicPodManager returns a podmanager.Manager, and podmanager asserts that its
// basic manager is one; a Manager must be all the controller and the metrics need, so that an
// agent passes the one it built to both.
var (
	_ PodManager = podmanager.Manager(nil)
	_ PodLister  = podmanager.Manager(nil)
)
