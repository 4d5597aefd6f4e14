package probe

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vk-static/vk-static/podutil"
)

// Target is how to reach one running container instance: what the kubelet finds in the pod's
// status and the container's spec when it probes or runs a hook.
type Target struct {
	// Host is the address for grpc actions and for httpGet and tcpSocket actions that name no
	// host: the pod IP (the node's for a pod on the host's network — the caller decides). When
	// it is empty, PodIP is asked each time such an action runs (the pod's address may become
	// known after the target was made); empty from both is an error (ErrNoHost).
	Host  string
	PodIP func() string
	// Ports are the container's declared ports, for ports named by an intstr name.
	Ports []corev1.ContainerPort
	// Env is the container's env: an exec probe's command expands $(VAR) from its static values
	// (value, not valueFrom), as the kubelet does. Hooks' commands are not expanded.
	Env []corev1.EnvVar
	// Exec runs cmd in the container and returns its combined output and exit code; err is for
	// a command that could not be run or did not finish (ctx ended). nil: exec is not supported
	// by the runtime, and exec actions fail with ErrExecUnsupported.
	Exec func(ctx context.Context, cmd []string) (output []byte, exitCode int, err error)

	// Pod and Container name the instance in hook failure messages: Pod as the kubelet prints
	// it (FormatPod), Container the container's name.
	Pod       string
	Container string
	// PodNamespace and PodName are the instance's pod, for the labels of its probes' metrics
	// (WithMetrics).
	PodNamespace, PodName string
	// Warn, if set, receives what the kubelet records as a Warning event on the pod while
	// running a hook that still succeeds (reason LifecycleHTTPFallback).
	Warn func(reason, message string)
}

// FormatPod prints a pod as the kubelet's messages do: its full name and UID,
// "name_namespace(uid)".
func FormatPod(name, namespace string, uid types.UID) string {
	return podutil.BuildFullName(name, namespace) + "(" + string(uid) + ")"
}

var (
	// ErrExecUnsupported is an exec action on a Target without Exec.
	ErrExecUnsupported = errors.New("exec is not supported by this container runtime")
	// ErrNoHandler is a probe or hook that names no action this agent runs (a hook's tcpSocket
	// is one: the API keeps the field but the kubelet fails such hooks at runtime).
	ErrNoHandler = errors.New("invalid handler")
	// ErrNoHost is an httpGet, tcpSocket or grpc action naming no host, on a Target without Host
	// or PodIP.
	ErrNoHost = errors.New("no host to reach the container: the action names none and the pod has no IP")
)

// ExitError is a command that ran in the container and exited non-zero.
type ExitError struct {
	Command []string
	Code    int
	Output  []byte
}

// Error reads as the CRI client's exit error, which the kubelet puts in hook failure messages.
func (e *ExitError) Error() string {
	return fmt.Sprintf("command '%s' exited with %d: %s", strings.Join(e.Command, " "), e.Code, e.Output)
}

// host is the address for an action that names none: Host, else what PodIP says now.
func (t *Target) host() string {
	if t.Host == "" && t.PodIP != nil {
		return t.PodIP()
	}
	return t.Host
}
