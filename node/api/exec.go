package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/httpstream/wsstream"
	"k8s.io/cri-streaming/pkg/streaming/remotecommand"
	"k8s.io/klog/v2"
	utilexec "k8s.io/utils/exec"

	"github.com/vk-static/vk-static/provider"
)

// streamCreationTimeout is the time a client has to open its streams, the kubelet's (the idle
// timeout is Routes.StreamIdleTimeout).
const streamCreationTimeout = remotecommand.DefaultStreamCreationTimeout

// exec serves /exec/{namespace}/{pod}/{container} (and with the pod's UID before the
// container), what the API server proxies for pods/exec: SPDY (v1 to v4) through
// serveSPDYRemoteCommand, WebSocket (v1 to v5) through k8s.io/cri-streaming; the provider runs
// the command. The command's
// exit code reaches the client, which exits with it.
func (rt Routes) exec(w http.ResponseWriter, r *http.Request) {
	namespace, podName, container, opts, ok := remoteCommandRequest(w, r)
	if !ok {
		return
	}
	cmd := r.URL.Query()["command"]
	if len(cmd) == 0 {
		http.Error(w, "command: Required value: the command to run", http.StatusBadRequest)
		return
	}
	execer, ok := capability[provider.ContainerExecHandler](w, rt.Provider)
	if !ok {
		return
	}
	pod, ok := rt.streamPod(w, r, namespace, podName, container)
	if !ok {
		return
	}
	w, r, stop := untilHangup(w, r)
	defer stop()
	executor := providerExecutor{execer, namespace}
	if !wsstream.IsWebSocketRequest(r) {
		serveSPDYRemoteCommand(w, r, opts, rt.streamIdleTimeout(), streamCreationTimeout,
			func(ctx context.Context, in io.Reader, out, errw io.WriteCloser, tty bool, resize <-chan remotecommand.TerminalSize) error {
				return executor.ExecInContainer(ctx, pod.Name, string(pod.UID), container, cmd, in, out, errw, tty, resize, 0)
			}, execStatus)
		return
	}
	remotecommand.ServeExec(w, r, executor, pod.Name, string(pod.UID), container, cmd,
		opts, rt.streamIdleTimeout(), streamCreationTimeout, remotecommand.SupportedStreamingProtocols)
}

// execStatus is the status of a finished exec, as cri-streaming's ServeExec writes it: the
// command's exit code, or the failure to run it.
func execStatus(err error) *commandStatus {
	if err == nil {
		return &commandStatus{Status: statusSuccess}
	}
	var exitErr utilexec.ExitError
	if errors.As(err, &exitErr) && exitErr.Exited() {
		return &commandStatus{Status: statusFailure, Reason: remotecommand.NonZeroExitCodeReason,
			Details: &statusDetails{Causes: []statusCause{{Type: remotecommand.ExitCodeCauseType, Message: strconv.Itoa(exitErr.ExitStatus())}}},
			Message: fmt.Sprintf("command terminated with non-zero exit code: %v", exitErr)}
	}
	return internalErrorStatus(fmt.Errorf("error executing command in container: %w", err))
}

// providerExecutor is the provider's exec as cri-streaming calls it.
type providerExecutor struct {
	h         provider.ContainerExecHandler
	namespace string
}

func (e providerExecutor) ExecInContainer(ctx context.Context, name, _, container string, cmd []string, in io.Reader, out, errw io.WriteCloser, tty bool, resize <-chan remotecommand.TerminalSize, _ time.Duration) error {
	aio, stop := newAttachIO(ctx, in, out, errw, tty, resize)
	defer stop()
	err := e.h.RunInContainer(ctx, e.namespace, name, container, cmd, aio)
	if err != nil && !isExitError(err) {
		klog.FromContext(ctx).V(3).Info("Exec failed", "pod", klog.KRef(e.namespace, name), "container", container, "err", err)
	}
	return unwrapExitError(err)
}

// remoteCommandRequest checks what every exec and attach request carries — the names in its
// path and cri-streaming's options — and answers 400 when they are wrong.
func remoteCommandRequest(w http.ResponseWriter, r *http.Request) (namespace, pod, container string, opts *remotecommand.Options, ok bool) {
	namespace, pod, container = r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container")
	if msg := validatePodPath(namespace, pod, container); msg != "" {
		http.Error(w, msg, http.StatusBadRequest)
		return "", "", "", nil, false
	}
	opts, err := remotecommand.NewOptions(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return "", "", "", nil, false
	}
	return namespace, pod, container, opts, true
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
