package agent

import (
	"runtime"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vk-static/vk-static/internal/version"
)

// NewNode is the Node an agent registers unless told otherwise: the well-known hostname, OS and
// architecture labels (plus labels), the InternalIP nodeIP (omitted when empty) and the hostname
// as addresses, and the kubelet version line `kubectl get nodes` shows. The provider's factory
// completes it when the agent is built (ProviderConfig.Node).
//
// It advertises no daemon endpoint: the agent sets the kubelet port when it serves the kubelet
// API (Config.API), and only then, as a port nothing listens on sends `kubectl logs` to a dead
// end (and with none, the API server tries the default 10250).
func NewNode(name, nodeIP string, labels map[string]string) *corev1.Node {
	all := map[string]string{
		corev1.LabelHostname:   name,
		corev1.LabelOSStable:   runtime.GOOS,
		corev1.LabelArchStable: runtime.GOARCH,
	}
	for k, v := range labels {
		all[k] = v
	}
	var addresses []corev1.NodeAddress
	if nodeIP != "" {
		addresses = append(addresses, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: nodeIP})
	}
	addresses = append(addresses, corev1.NodeAddress{Type: corev1.NodeHostName, Address: name})
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: all},
		Status: corev1.NodeStatus{
			Addresses: addresses,
			NodeInfo: corev1.NodeSystemInfo{
				KubeletVersion:  KubeletVersion(),
				OperatingSystem: runtime.GOOS,
				Architecture:    runtime.GOARCH,
			},
		},
	}
}

// KubeletVersion is the Kubernetes API line vk-static implements, and vk-static's own version.
func KubeletVersion() string {
	return "v1.36.3-vk-static+" + version.Version
}
