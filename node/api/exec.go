package api

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/cri-streaming/pkg/streaming/remotecommand"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/node"
)

// The kubelet's stream timeouts (its --streaming-connection-idle-timeout default, and the
// time a client has to open its streams).
const (
	streamIdleTimeout     = 4 * time.Hour
	streamCreationTimeout = remotecommand.DefaultStreamCreationTimeout
)

// exec serves /exec/{namespace}/{pod}/{container} (and with the pod's UID before the
// container), what the API server proxies for pods/exec: k8s.io/cri-streaming speaks the
// protocols (SPDY and WebSocket, v1 to v5) and the provider runs the command. The command's
// exit code reaches the client, which exits with it.
func (rt Routes) exec(w http.ResponseWriter, r *http.Request) {
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
	cmd := r.URL.Query()["command"]
	if len(cmd) == 0 {
		http.Error(w, "command: Required value: the command to run", http.StatusBadRequest)
		return
	}
	execer, err := node.Capability[node.ContainerExecHandler](rt.Provider)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotImplemented)
		return
	}
	pod, ok := rt.streamPod(w, r, namespace, podName, container)
	if !ok {
		return
	}
	remotecommand.ServeExec(w, r, providerExecutor{execer, namespace}, pod.Name, string(pod.UID), container, cmd,
		opts, streamIdleTimeout, streamCreationTimeout, remotecommand.SupportedStreamingProtocols)
}

// providerExecutor is the provider's exec as cri-streaming calls it.
type providerExecutor struct {
	h         node.ContainerExecHandler
	namespace string
}

func (e providerExecutor) ExecInContainer(ctx context.Context, name, _, container string, cmd []string, in io.Reader, out, errw io.WriteCloser, tty bool, resize <-chan remotecommand.TerminalSize, _ time.Duration) error {
	aio := &attachIO{in: in, out: out, err: errw, tty: tty}
	if tty && resize != nil {
		sizes := make(chan node.TermSize, 1)
		aio.resize = sizes
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		go forwardSizes(ctx, resize, sizes)
	}
	err := e.h.RunInContainer(ctx, e.namespace, name, container, cmd, aio)
	if err != nil && !isExitError(err) {
		klog.FromContext(ctx).V(3).Info("Exec failed", "pod", klog.KRef(e.namespace, name), "container", container, "err", err)
	}
	return unwrapExitError(err)
}

// streamPod finds the pod a stream route names, with the container and, when the path has one,
// the UID it must have; it answers 404 when there is none.
func (rt Routes) streamPod(w http.ResponseWriter, r *http.Request, namespace, podName, container string) (*corev1.Pod, bool) {
	pod, ok := rt.Pods.GetPodByName(namespace, podName)
	if !ok || (r.PathValue("uid") != "" && string(pod.UID) != r.PathValue("uid")) {
		http.Error(w, fmt.Sprintf("pod %q does not exist", podName), http.StatusNotFound)
		return nil, false
	}
	if container != "" && !hasContainer(pod, container) {
		http.Error(w, fmt.Sprintf("container %q not found in pod %q", container, podName), http.StatusNotFound)
		return nil, false
	}
	return pod, true
}
