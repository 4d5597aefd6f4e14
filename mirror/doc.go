// Package mirror keeps the API server's view of static pods: it creates and deletes mirror
// pods (Client), says whether a pod is the current mirror of a static pod (IsMirrorOf), and
// decides what must happen to a mirror (Decide). It never decides a pod's lifecycle, and
// Decide does no I/O: the lifecycle loop in node/ reads the state, asks Decide, and calls the
// Client.
//
// Contract:
//
//   - A mirror is created with the static pod's name, namespace, labels, annotations and spec,
//     the annotation kubernetes.io/config.mirror = the static pod's config.hash, and exactly one
//     owner reference {v1, Node, <node>, <live Node UID>, controller: true}. Nothing is sent
//     while the Node is missing or being deleted (ErrNodeUnavailable). AlreadyExists comes back
//     as ErrMirrorExists: look at the pod that is there and Decide again.
//   - A mirror is deleted with grace period 0 and its UID as precondition; NotFound and a failed
//     precondition are (false, nil). Mirrors are never updated: a stale mirror is recreated.
//   - The client needs the node identity (system:node:<name>); NodeRestriction admits only
//     mirrors bound to and owned by that node. The API server refuses mirrors that reference
//     secrets, service accounts, config maps and the like, which is why sources/ rejects such
//     static pods first.
//
// The smallest use:
//
//	c := mirror.NewBasicMirrorClient(clientset, nodeName, nodeLister)
//	switch mirror.Decide(mirror.DecisionInput{Static: static, Mirror: current, NodeExists: true}) {
//	case mirror.Create:
//		err = c.CreateMirrorPod(ctx, static)
//	case mirror.Recreate, mirror.Delete:
//		_, err = c.DeleteMirrorPod(ctx, podutil.FullName(current), &current.UID) // then create for Recreate
//	}
//
// # Acceptance behaviours of the kubelet's test/e2e_node/mirror_pod_test.go
//
// Each behaviour, and the tests here that cover it (the lifecycle loop's tests exercise them
// end to end with a running agent):
//
//   - "should be updated when static pod updated" (conformance: Mirror Pod, update): an edited
//     manifest recreates the mirror with a new UID and the new image —
//     integration.TestMirrorRecreatedAfterEdit; the "edited manifest" row of TestDecide;
//     podmanager.TestStaticPodEditedWhileOldMirrorExists (the old mirror is still found by
//     full name and IsMirrorPodOf is false, so the loop knows to recreate).
//   - "should be recreated when mirror pod gracefully deleted" (conformance: Mirror Pod,
//     delete): integration.TestMirrorRecreatedAfterUserDeletes/gracefully (the mirror is held
//     with a deletionTimestamp; Decide says Recreate); the "mirror deleted by a user" row of
//     TestDecide.
//   - "should be recreated when mirror pod forcibly deleted" (conformance: Mirror Pod, force
//     delete): integration.TestMirrorRecreatedAfterUserDeletes/forcibly (Decide says Create).
//   - After each: "delete the static pod, wait for the mirror pod to disappear":
//     integration.TestOrphanedMirrorDeleted; the orphan rows of TestDecide;
//     podmanager.TestGetOrphanedMirrorPodNames.
//   - "should successfully recreate when file is removed and recreated" (conformance: Mirror
//     Pod, recreate): the same manifest yields the same UID and hash, so the mirror pairs again
//     and is not an orphan — podmanager.TestGetOrphanedMirrorPodNames and
//     podmanager.TestTranslationsInEveryOrder. The restart count it checks is the provider's
//     and the lifecycle loop's.
//   - "should launch successfully even if it temporarily failed termination": an orphaned
//     mirror is left alone until the old static pod finished terminating — the orphan rows of
//     TestDecide (None while StaticTerminated is false). Waiting for termination before
//     starting the new pod is the lifecycle loop's.
//   - validateMirrorPod, checked by every case above: config.hash and config.mirror equal and
//     non-empty, a config.source other than "api", exactly one owner reference {v1, Node, name,
//     live Node UID, controller} — TestCreateMirrorPodRequest and assertMirrorOf in every
//     integration test (owner UID compared with the live Node's in TestMirrorPodLifecycle).
//   - Pod Generation ("update activeDeadlineSeconds / container image / initContainer
//     image"): the mirror is recreated, so its generation is 1 —
//     integration.TestMirrorRecreatedAfterEdit. That status.observedGeneration stays empty is
//     the status writer's (node/) to keep.
//   - Not mirror behaviour, left to the provider and lifecycle issues: EnvFiles, and "should
//     not change container status" across a kubelet restart.
package mirror
