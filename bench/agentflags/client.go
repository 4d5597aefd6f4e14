package agentflags

import (
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// Client is the API client of the node identity (--kubeconfig) as every agent of the bench
// uses it: the flags' rate, and protobuf as vk-static and the kubelet speak it, so that no peer
// pays for JSON the others do not.
func (f Flags) Client(userAgent string) (kubernetes.Interface, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", f.Kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = float32(f.QPS), f.Burst
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cfg.UserAgent = userAgent
	return kubernetes.NewForConfig(cfg)
}
