package provider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"time"

	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// The interfaces below are optional provider capabilities: what the kubelet HTTP API serves
// beyond the pod lifecycle (kubectl logs, exec, attach, port-forward, top). A provider implements
// the ones it can; the API answers 501 Not Implemented for the others (Capability tells which).
// They are separate so that a provider need not fake what it cannot do, and their names and
// methods follow virtual-kubelet's (node/api's handler funcs, nodeutil.Provider's methods) so
// that a provider written for one is easily ported to the other.
//
// Common to all of them:
//
//   - namespace and pod name the pod as GetPod does; an unknown pod, or a container the pod does
//     not have, is an error that IsNotFound recognises (NotFound);
//   - a request the provider can never serve as asked (an empty command, a port the pod does not
//     declare) is an error that IsInvalidInput recognises (InvalidInput); any other error is the
//     provider's failure, such as a container that is not running;
//   - streams (readers, writers, AttachIO, the port-forward stream) belong to the caller, who
//     closes them after the call returns; the provider does not use them after returning, except
//     that one Read of a stdin or port-forward stream may still be pending (a Read cannot be
//     interrupted) and ends when the caller closes it;
//   - ctx ends a call early: when it ends, a call returns promptly, with ctx's error or nil.

// ContainerLogsHandler is implemented by providers that keep their containers' logs.
type ContainerLogsHandler interface {
	// GetContainerLogs returns the log of one container of a pod, shaped by opts; the caller
	// closes the reader. It returns as soon as the stream exists, without waiting for log lines.
	// Without opts.Follow the reader ends (io.EOF) at the end of the log as it is now; with it,
	// the reader waits for new lines until the container terminates (io.EOF) or ctx ends (ctx's
	// error): ctx bounds the stream, not only this call. Init containers are named like any
	// other. opts.Previous asks for the container's previous instance (before its last
	// restart); a container with none is NotFound.
	GetContainerLogs(ctx context.Context, namespace, podName, containerName string, opts ContainerLogOpts) (io.ReadCloser, error)
}

// ContainerLogOpts selects the part of a log GetContainerLogs returns; the zero value is the whole
// log of the current instance, without timestamps. They are the kubelet's (PodLogOptions) and
// are applied in its order: since, then tail, then the byte limit.
type ContainerLogOpts struct {
	// Tail, when positive, starts the log that many lines before its end; zero or negative is
	// the whole log. (The kubelet's tailLines=0, "no lines", is not expressible: the caller
	// answers it without the provider.)
	Tail int
	// LimitBytes, when positive, ends the stream after that many bytes, possibly mid-line.
	LimitBytes int64
	// Timestamps prefixes every line with its time (RFC 3339 with nanoseconds) and a space.
	Timestamps bool
	// Follow keeps the stream open for new lines (see GetContainerLogs).
	Follow bool
	// Previous reads the container's previous instance instead of its current one.
	Previous bool
	// SinceSeconds, when positive, leaves out lines older than that many seconds; SinceTime,
	// when set, lines older than it. If both are given the later bound applies.
	SinceSeconds int
	SinceTime    time.Time
}

// ContainerExecHandler is implemented by providers that can run a command in a container.
type ContainerExecHandler interface {
	// RunInContainer runs cmd in the container, copying between attach's streams and the
	// command's stdin, stdout and stderr; it blocks until the command ends (or ctx ends). A
	// command that ran and exited 0 returns nil; one that exited otherwise returns an error in
	// which errors.As finds a k8s.io/utils/exec.ExitError (return k8s.io/utils/exec.CodeExitError)
	// carrying the exit code, which the API passes on to the client (kubectl exits with it). Any
	// other error means the command could not be run. A container that is not running is an
	// error (not NotFound: the container exists).
	RunInContainer(ctx context.Context, namespace, podName, containerName string, cmd []string, attach AttachIO) error
}

// ContainerAttachHandler is implemented by providers that can attach to a container's running
// process.
type ContainerAttachHandler interface {
	// AttachToContainer connects attach's streams to the stdin, stdout and stderr of the
	// container's main process and blocks until the process ends, stdin is closed, or ctx ends.
	// A container that is not running is an error, as for RunInContainer.
	AttachToContainer(ctx context.Context, namespace, podName, containerName string, attach AttachIO) error
}

// AttachIO is the client's end of an exec or attach: the streams it asked for, and its
// terminal.
type AttachIO interface {
	// Stdin is what the client types; nil if it sends no input.
	Stdin() io.Reader
	// Stdout and Stderr are what the client sees; nil for a stream it did not ask for. With a
	// TTY there is no Stderr: a terminal has one output, so the process's errors go to Stdout.
	Stdout() io.WriteCloser
	Stderr() io.WriteCloser
	// TTY reports whether the client asked for a terminal.
	TTY() bool
	// Resize delivers the client's terminal size whenever it changes, while TTY; nil without a
	// TTY. The provider need not read it: the caller never blocks on a size the provider has
	// not taken, and stops sending when the call returns.
	Resize() <-chan TermSize
}

// TermSize is the size of the client's terminal, in characters.
type TermSize struct {
	Width  uint16
	Height uint16
}

// PortForwardHandler is implemented by providers that can connect to a pod's ports.
type PortForwardHandler interface {
	// PortForward connects stream to port of the pod (TCP) and copies both ways until either
	// side closes or ctx ends. The provider may close stream to end the connection early; the
	// caller closes it after PortForward returns either way.
	PortForward(ctx context.Context, namespace, podName string, port int32, stream io.ReadWriteCloser) error
}

// StatsSummaryHandler is implemented by providers that measure their node's and pods' resource
// use: the kubelet's Summary API (/stats/summary, kubectl top through metrics-server) and
// /metrics/resource are both built from it.
type StatsSummaryHandler interface {
	// GetStatsSummary returns the node's and every running pod's current CPU (usage nanocores
	// and cumulative core-nanoseconds) and memory (working set and usage bytes), with each pod's
	// and container's start time. Pod references carry the UID the provider was given. It must
	// not block on anything slower than reading the provider's own state; the returned summary
	// is the caller's.
	GetStatsSummary(ctx context.Context) (*statsv1alpha1.Summary, error)
}

// Capability returns provider as the capability T (one of the interfaces above), or, if the
// provider does not implement it, an error that IsNotImplemented recognises and that names T —
// the API answers it with 501 Not Implemented.
//
//	logs, err := provider.Capability[provider.ContainerLogsHandler](p)
func Capability[T any](provider any) (T, error) {
	if c, ok := provider.(T); ok {
		return c, nil
	}
	var zero T
	return zero, fmt.Errorf("%w: the provider %T does not implement %v", ErrNotImplemented, provider, reflect.TypeFor[T]())
}

// ErrNotImplemented: the provider lacks an optional capability (Capability).
var ErrNotImplemented = errors.New("not implemented")

// IsNotImplemented reports whether err, or any error it wraps, is ErrNotImplemented.
func IsNotImplemented(err error) bool { return errors.Is(err, ErrNotImplemented) }
