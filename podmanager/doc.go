// Package podmanager is the agent's in-memory pod manager, the kubelet's pod.Manager: the
// regular pods bound to this node (static pods from files and URLs, and pods from the API
// server), the mirror pods the API server holds for the static ones, and the translation
// between a static pod's UID and its mirror's UID.
//
// Contract:
//
//   - Lookups by UID and by full name ("name_namespace") are O(1); the Manager is safe for
//     concurrent use and readers never wait on the API server.
//   - Pods handed to the Manager must not be changed afterwards; pods it returns are shared
//     and read-only.
//   - A mirror pod is a pod with the kubernetes.io/config.mirror annotation; a static pod is a
//     regular pod whose kubernetes.io/config.source is not "api" (see podutil).
//   - A static pod and its mirror pair by full name: GetMirrorPodByPod and GetPodByMirrorPod
//     answer by name alone, IsMirrorPodOf says whether the mirror is current (its
//     config.mirror equals the static pod's config.hash).
//   - TranslatePodUID maps a mirror UID to the UID of the static pod it is a current mirror
//     of. The translation is made only when the hashes match, and it outlives the static pod:
//     it goes when the mirror goes. So after an edit (old UID A removed, new UID B added, the
//     mirror M of A still there) M still translates to A — the pod the provider is still
//     terminating — and B has no mirror until M is recreated.
//   - UIDs of the two kinds have two types, as in the kubelet: ResolvedPodUID (a pod the agent
//     runs) and MirrorPodUID (a mirror). TranslatePodUID and GetUIDTranslations use them, so
//     that a mirror UID used where the static pod's is meant fails to compile. Lookups that take
//     a pod or a types.UID (GetPodByUID, DeletePod) are as the kubelet has them.
//   - GetOrphanedMirrorPodNames lists mirror full names with no regular pod of that name.
//   - The Manager does no I/O: it holds pods. Mirror pods are written by a mirror.Client that
//     its user holds beside it (the pod controller's), as the kubelet holds its
//     mirrorPodClient beside its pod manager.
//
// The smallest use:
//
//	pm := podmanager.NewBasicPodManager()
//	pm.AddPod(staticPod)              // from sources/
//	pm.AddPod(mirrorPodFromInformer)  // from the API server
//	if m, ok := pm.GetMirrorPodByPod(staticPod); !ok || !pm.IsMirrorPodOf(m, staticPod) {
//		// decide with mirror.Decide, then mirrors.CreateMirrorPod(ctx, staticPod) ...
//	}
package podmanager
