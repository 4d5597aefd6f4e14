// Package sources produces the pods a node must run, from three sources, merged with the
// kubelet's semantics:
//
//   - FileSource: static pod manifests in a directory (or one file), via fsnotify plus a periodic
//     re-list;
//   - HTTPSource: a manifest URL, polled with conditional requests;
//   - APISource: the pods bound to the node in the API server (an informer with the field
//     selector spec.nodeName=<node>, all the node identity may read), mirror pods included.
//
// File and HTTP sources send full Snapshots. The API source sends a full snapshot after every
// (re)list and, in between, partial ones holding only the changed pods and the deleted UIDs, so
// one change costs O(1) on a node with many pods. The Merger, a pure state machine, turns them
// into ordered PodUpdates (REMOVE, ADD, UPDATE, DELETE, RECONCILE) and keeps full names unique
// across sources; a source is seen once its first full snapshot is merged.
// Mux runs the sources and one Merger and delivers the updates on a channel. DecodeManifest is
// the one decoder for files, URLs and `vk-static validate`: it applies the static-pod defaults
// (name "<name>-<node>", a UID hashed from the manifest, node and location, the
// kubernetes.io/config.* annotations, the API server's defaults and, for files only as in the
// kubelet, a toleration of every NoExecute taint), validates like the API server, and rejects
// pods that reference API objects.
//
// Contract: sources only read; they never talk to the provider or write to the API server. Bad
// input never takes a running pod down: a manifest that fails to decode keeps its last good
// pods and is reported once to the ProblemReporter; an HTTP error keeps the last good set. A
// source that cannot be read at all — a manifest path that does not exist or cannot be listed
// (unlike the kubelet, for which a missing path is an empty set), a URL that cannot be fetched —
// is reported once as a Problem wrapping ErrSourceUnavailable and sends nothing: not seen yet,
// it stays unseen (no pod is stopped because of it); seen, it keeps its last set until it can be
// read again, which is reported once to a RecoveryReporter. The Mux logs one line, once every
// source is seen, counting each source's pods. Pods in
// snapshots and updates are shared and read-only. The API source's pods also share parts with
// each other (equal labels, annotations, containers, conditions, tolerations, start times, ...;
// see trimAPIPod), so a write into any part of one, even through a shallow copy, changes other
// pods: deep-copy what is to be changed. Every goroutine stops when its context is
// cancelled, and Run methods return only after their goroutines have.
//
// The smallest use:
//
//	files, err := sources.NewFileSource(sources.FileConfig{Path: "/etc/kubernetes/manifests", NodeName: node})
//	if err != nil { ... }
//	mux := sources.NewMux(reporter, files, sources.NewAPISource(client, node)) // client: a kubeclient.Interface
//	go mux.Run(ctx)
//	for u := range mux.Updates() {
//		handle(u.Op, u.Source, u.Pods) // e.g. node.PodController
//	}
package sources
