// Package localcopy keeps on the node a copy of what each API pod's containers are built from,
// so that after an agent restart or a reboot while the API server cannot be reached the pod runs
// again with the data it had. The kubelet keeps none, and such a pod waits
// (CreateContainerConfigError, FailedMount) until the API server answers.
//
// What is kept, per pod (by UID), in <PodsDir>/<uid>/local-copy: the ConfigMaps and Secrets its
// env, volumes and image pull secrets read (configmap-<name>.json, secret-<name>.json), the
// Services its service environment variables come from (services.json: those of its namespace
// when enableServiceLinks, and default/kubernetes), and the projected service-account tokens it
// was issued (token-<hash>.json), each until it expires. The directory is 0700 and every file
// 0600, owned by the agent (root): Secrets and tokens are never in a place others can read. Each
// file is written atomically and durably (internal/atomicfile), and only when its content
// changed. The lifecycle owns <PodsDir>/<uid>; the copy goes with it when the pod is forgotten,
// and is never written for a pod whose directory is gone.
//
// When it is used: every read goes to the API server first, and what it answers replaces the
// copy. The copy answers only when the API server cannot be reached (Unreachable: no answer at
// all — connection refused or reset, a timeout — or an answer that it cannot answer now: 429,
// 5xx). An answer is the answer: a 404 means the object is gone (the copy is removed, and the
// caller treats it as the kubelet treats a missing object), a 403 that the node may not read
// it. The Services' copy answers only while the agent's watch has not listed them once (an
// agent started during an outage): once it has, the watch keeps the last Services it saw, as
// the kubelet's informer does. A token's copy is never served once it has expired.
//
// Smallest use, around the node's getters (nodeobjects):
//
//	copies := localcopy.New(localcopy.Config{PodsDir: "/var/lib/vk-static/pods",
//		Objects: objects, Tokens: tokens, Services: services})
//	cm, err := copies.Objects(pod).GetConfigMap(ctx, pod.Namespace, "cfg") // the copy during an outage
//	list, err := copies.Services(pod).List()
//	tr, err := copies.Tokens().RequestToken(ctx, pod.Namespace, "default", req) // req bound to the pod
package localcopy
