package podutil

// The kubelet's config annotations; tools (kubectl, kubeadm, controllers) read them by these
// exact names.
const (
	// ConfigSourceAnnotationKey names where a pod came from: FileSource, HTTPSource or
	// APIServerSource.
	ConfigSourceAnnotationKey = "kubernetes.io/config.source"
	// ConfigHashAnnotationKey is a static pod's identity: its UID, derived from the manifest.
	ConfigHashAnnotationKey = "kubernetes.io/config.hash"
	// ConfigMirrorAnnotationKey marks a mirror pod; its value is the static pod's hash.
	ConfigMirrorAnnotationKey = "kubernetes.io/config.mirror"
	// ConfigFirstSeenAnnotationKey records when the agent first saw a static pod (RFC 3339).
	ConfigFirstSeenAnnotationKey = "kubernetes.io/config.seen"
)

// ConfigFileAnnotationKey records the manifest file a file-source static pod was decoded from
// (vk-static's own; the kubelet has none). It lets a restarted agent tell which pod the provider
// still runs belongs to a manifest that has meanwhile become undecodable, and keep it; it also
// tells a person where a mirror pod's manifest lives.
const ConfigFileAnnotationKey = "vk-static.io/config.file"

// Source names, the values of ConfigSourceAnnotationKey.
const (
	FileSource      = "file"
	HTTPSource      = "http"
	APIServerSource = "api"
)
