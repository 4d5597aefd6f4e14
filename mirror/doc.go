// Package mirror keeps the API server's view of static pods: it creates and deletes mirror
// pods (Client), says whether a pod is the current mirror of a static pod (IsMirrorOf), and
// decides what must happen to a mirror (Decide). It never decides a pod's lifecycle, and
// Decide does no I/O: the pod sync loop in node/ reads the state, asks Decide, and calls the
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
//	c := mirror.NewBasicMirrorClient(client, nodeName, nodeLister) // a kubeclient.Interface
//	switch mirror.Decide(mirror.DecisionInput{Static: static, Mirror: current, NodeUsable: true}) {
//	case mirror.Create:
//		err = c.CreateMirrorPod(ctx, static)
//	case mirror.Recreate, mirror.Delete:
//		_, err = c.DeleteMirrorPod(ctx, podutil.FullName(current), &current.UID) // then create for Recreate
//	}
package mirror
