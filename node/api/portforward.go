package api

import (
	"context"
	"io"
	"net/http"

	"k8s.io/apimachinery/pkg/util/httpstream/wsstream"
	"k8s.io/cri-streaming/pkg/streaming/portforward"

	"github.com/vk-static/vk-static/provider"
)

// portForward serves /portForward/{namespace}/{pod}[/{uid}], what the API server proxies for
// pods/portforward: a stream per connection, which the provider connects to the pod's port,
// over SPDY (serveSPDYPortForward, cri-streaming's protocol with its goroutines bound to the
// request) or WebSocket (k8s.io/cri-streaming). The ports are named per
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
	forwarder := providerPortForwarder{h: pf, namespace: namespace, ctx: r.Context()}
	if !wsstream.IsWebSocketRequest(r) {
		serveSPDYPortForward(w, r, forwarder, pod.Name, string(pod.UID), rt.streamIdleTimeout(), streamCreationTimeout)
		return
	}
	portforward.ServePortForward(w, r, forwarder, pod.Name, string(pod.UID), opts,
		rt.streamIdleTimeout(), streamCreationTimeout, portforward.SupportedProtocols)
}

// providerPortForwarder is the provider's port-forward as cri-streaming calls it. The provider's
// context ends with ctx, the request's, too: cri-streaming's WebSocket forwards pass
// context.Background.
type providerPortForwarder struct {
	h         provider.PortForwardHandler
	namespace string
	ctx       context.Context
}

func (p providerPortForwarder) PortForward(ctx context.Context, name, _ string, port int32, stream io.ReadWriteCloser) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(p.ctx, cancel)()
	return p.h.PortForward(ctx, p.namespace, name, port, stream)
}
