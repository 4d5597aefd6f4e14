// Package e2ejoin tests joining a cluster as a kubelet does, end to end: the built vk-static
// binary against a control plane of its own with kube-controller-manager (certificate signing
// and approval, bootstrap tokens), under the Node authorizer and NodeRestriction. An agent given
// only a bootstrap token obtains its client certificate, runs static and API pods with it,
// rotates it (certificates last two minutes here) without disturbing them, and reuses it when
// restarted; a wrong or expired token is retried, a denied request is final.
package e2ejoin
