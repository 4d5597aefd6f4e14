package api

import (
	"context"
	"io"
	"net/http"

	"k8s.io/cri-streaming/pkg/streaming/remotecommand"

	"github.com/vk-static/vk-static/node"
)

// attach serves /attach/{namespace}/{pod}[/{uid}]/{container}, what the API server proxies for
// pods/attach: k8s.io/cri-streaming speaks the protocols, the provider attaches.
func (rt Routes) attach(w http.ResponseWriter, r *http.Request) {
	namespace, podName, container := r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container")
	if msg := validatePodPath(namespace, podName, container); msg != "" {
		http.Error(w, msg, http.StatusBadRequest)
		return
	}
	opts, err := remotecommand.NewOptions(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	attacher, err := node.Capability[node.ContainerAttachHandler](rt.Provider)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotImplemented)
		return
	}
	pod, ok := rt.streamPod(w, r, namespace, podName, container)
	if !ok {
		return
	}
	remotecommand.ServeAttach(w, r, providerAttacher{attacher, namespace}, pod.Name, string(pod.UID), container,
		opts, streamIdleTimeout, streamCreationTimeout, remotecommand.SupportedStreamingProtocols)
}

// providerAttacher is the provider's attach as cri-streaming calls it.
type providerAttacher struct {
	h         node.ContainerAttachHandler
	namespace string
}

func (a providerAttacher) AttachContainer(ctx context.Context, name, _, container string, in io.Reader, out, errw io.WriteCloser, tty bool, resize <-chan remotecommand.TerminalSize) error {
	aio := &attachIO{in: in, out: out, err: errw, tty: tty}
	if tty && resize != nil {
		sizes := make(chan node.TermSize, 1)
		aio.resize = sizes
		ctx2, cancel := context.WithCancel(ctx)
		defer cancel()
		go forwardSizes(ctx2, resize, sizes)
	}
	return a.h.AttachToContainer(ctx, a.namespace, name, container, aio)
}
