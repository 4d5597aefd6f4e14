package provider

import (
	"context"

	corev1 "k8s.io/api/core/v1"
)

// PodLifecycleHandler is what a provider implements to run pods. A pod passed to CreatePod,
// UpdatePod or DeletePod is a deep copy made for that call: the provider may keep and modify it
// (the pods it is copied from are shared, parts of them with other pods).
// Pods a provider returns from GetPod and GetPods are not modified by the caller.
type PodLifecycleHandler interface {
	// CreatePod starts pod. It is called once per pod UID unless the pod was deleted in between.
	CreatePod(ctx context.Context, pod *corev1.Pod) error
	// UpdatePod applies a spec change the API allows on a running pod (images, activeDeadlineSeconds,
	// tolerations, ...) or new labels or annotations (which the downward API shows). Static pods
	// never get UpdatePod: an edit is a new pod.
	UpdatePod(ctx context.Context, pod *corev1.Pod) error
	// DeletePod stops pod honouring its deletion grace period. It may be called more than once
	// for the same pod; afterwards the provider reports a terminal status (all containers
	// terminated) through NotifyPods, or GetPod returns a NotFound error.
	DeletePod(ctx context.Context, pod *corev1.Pod) error
	// GetPod returns the pod as the provider runs it, or an error that IsNotFound recognises.
	GetPod(ctx context.Context, namespace, name string) (*corev1.Pod, error)
	// GetPodStatus returns the pod's current status, or an error that IsNotFound recognises.
	GetPodStatus(ctx context.Context, namespace, name string) (*corev1.PodStatus, error)
	// GetPods lists every pod the provider runs, including pods it ran before the agent restarted.
	// Restart adoption matches them against the sources by full name and UID, and needs the
	// annotations the pod was given: kubernetes.io/config.source (until a pod's source has been
	// seen it is not stopped), kubernetes.io/config.hash (its mirror) and vk-static.io/config.file
	// (a manifest that no longer decodes keeps its pod). A provider that persists pods across a
	// restart must keep them, with the UID, namespace and name.
	GetPods(ctx context.Context) ([]*corev1.Pod, error)
}

// PodNotifier is implemented by providers that push status changes instead of being polled.
type PodNotifier interface {
	// NotifyPods registers cb for status changes and returns at once; it must not block. cb
	// may block. Pods passed to cb carry the UID the provider was given, and the provider
	// must not modify one after passing it: the caller keeps its status without copying.
	NotifyPods(ctx context.Context, cb func(*corev1.Pod))
}

// NodeProvider is implemented by providers that report node health and status.
type NodeProvider interface {
	// Ping checks that the provider can run pods; an error stops lease renewal so the node
	// turns NotReady.
	Ping(ctx context.Context) error
	// NotifyNodeStatus registers cb for node status changes and returns at once. cb may block.
	NotifyNodeStatus(ctx context.Context, cb func(*corev1.Node))
}
