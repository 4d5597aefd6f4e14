package api

import (
	"context"
	"io"
	"net/http"

	"k8s.io/cri-streaming/pkg/streaming/portforward"

	"github.com/vk-static/vk-static/provider"
)

// portForward serves /portForward/{namespace}/{pod}[/{uid}], what the API server proxies for
// pods/portforward: k8s.io/cri-streaming speaks the protocols (SPDY, WebSocket) and opens a
// stream per connection, which the provider connects to the pod's port. The ports are named per
// stream, so a port the pod does not declare fails that stream only.
func (rt Routes) portForward(w http.ResponseWriter, r *http.Request) {
	namespace, podName := r.PathValue("namespace"), r.PathValue("pod")
	if msg := validatePodPath(namespace, podName, ""); msg != "" {
		http.Error(w, msg, http.StatusBadRequest)
		return
	}
	opts, err := portforward.NewV4Options(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	pf, ok := capability[provider.PortForwardHandler](w, rt.Provider)
	if !ok {
		return
	}
	pod, ok := rt.streamPod(w, r, namespace, podName, "")
	if !ok {
		return
	}
	w, r, stop := untilHangup(w, r)
	defer stop()
	portforward.ServePortForward(w, r, providerPortForwarder{pf, namespace}, pod.Name, string(pod.UID), opts,
		rt.streamIdleTimeout(), streamCreationTimeout, portforward.SupportedProtocols)
}

// providerPortForwarder is the provider's port-forward as cri-streaming calls it.
type providerPortForwarder struct {
	h         provider.PortForwardHandler
	namespace string
}

func (p providerPortForwarder) PortForward(ctx context.Context, name, _ string, port int32, stream io.ReadWriteCloser) error {
	return p.h.PortForward(ctx, p.namespace, name, port, stream)
}
