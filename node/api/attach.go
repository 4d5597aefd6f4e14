package api

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"k8s.io/apimachinery/pkg/util/httpstream/wsstream"
	"k8s.io/cri-streaming/pkg/streaming/remotecommand"

	"github.com/vk-static/vk-static/provider"
)

// attach serves /attach/{namespace}/{pod}[/{uid}]/{container}, what the API server proxies for
// pods/attach: SPDY through serveSPDYRemoteCommand, WebSocket through k8s.io/cri-streaming; the
// provider attaches.
func (rt Routes) attach(w http.ResponseWriter, r *http.Request) {
	namespace, podName, container, opts, ok := remoteCommandRequest(w, r)
	if !ok {
		return
	}
	attacher, ok := capability[provider.ContainerAttachHandler](w, rt.Provider)
	if !ok {
		return
	}
	pod, ok := rt.streamPod(w, r, namespace, podName, container)
	if !ok {
		return
	}
	w, r, stop := untilHangup(w, r)
	defer stop()
	a := providerAttacher{attacher, namespace}
	if !wsstream.IsWebSocketRequest(r) {
		serveSPDYRemoteCommand(w, r, opts, rt.streamIdleTimeout(), streamCreationTimeout,
			func(ctx context.Context, in io.Reader, out, errw io.WriteCloser, tty bool, resize <-chan remotecommand.TerminalSize) error {
				return a.AttachContainer(ctx, pod.Name, string(pod.UID), container, in, out, errw, tty, resize)
			}, attachStatus)
		return
	}
	remotecommand.ServeAttach(w, r, a, pod.Name, string(pod.UID), container,
		opts, rt.streamIdleTimeout(), streamCreationTimeout, remotecommand.SupportedStreamingProtocols)
}

// attachStatus is the status of a finished attach, as cri-streaming's ServeAttach writes it.
func attachStatus(err error) *commandStatus {
	if err == nil {
		return &commandStatus{Status: statusSuccess}
	}
	return internalErrorStatus(fmt.Errorf("error attaching to container: %w", err))
}

// providerAttacher is the provider's attach as cri-streaming calls it.
type providerAttacher struct {
	h         provider.ContainerAttachHandler
	namespace string
}

func (a providerAttacher) AttachContainer(ctx context.Context, name, _, container string, in io.Reader, out, errw io.WriteCloser, tty bool, resize <-chan remotecommand.TerminalSize) error {
	aio, stop := newAttachIO(ctx, in, out, errw, tty, resize)
	defer stop()
	return a.h.AttachToContainer(ctx, a.namespace, name, container, aio)
}
