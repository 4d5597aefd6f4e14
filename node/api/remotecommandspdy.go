package api

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/cri-streaming/pkg/streaming/remotecommand"
	"k8s.io/klog/v2"
)

// remoteCommand is what an exec or attach runs once the client's streams are open; its error
// becomes the status written on the error stream (commandStatus).
type remoteCommand func(ctx context.Context, in io.Reader, out, errw io.WriteCloser, tty bool, resize <-chan remotecommand.TerminalSize) error

// serveSPDYRemoteCommand is cri-streaming's SPDY exec and attach (remotecommand.ServeExec and
// ServeAttach: protocols v1 to v4, the kubelet's) with every goroutine bound to the request
// (spdyConn). cri-streaming's waits for the client's streams until the creation timeout (30 s)
// even when the client has hung up, or the idle timeout has closed the connection, meanwhile.
func serveSPDYRemoteCommand(w http.ResponseWriter, r *http.Request, opts *remotecommand.Options, idleTimeout, creationTimeout time.Duration, run remoteCommand, status func(error) *commandStatus) {
	protocol, err := httpstream.Handshake(r, w, remotecommand.SupportedStreamingProtocols)
	if err != nil {
		return // Handshake has answered
	}
	c := upgradeSPDY(w, r, nil)
	if c == nil {
		return
	}
	defer c.close()
	c.conn.SetIdleTimeout(idleTimeout)
	logger := klog.FromContext(c.ctx)

	resizable := protocol == remotecommand.StreamProtocolV4Name || protocol == remotecommand.StreamProtocolV3Name
	expected := 1 // the error stream
	for _, want := range []bool{opts.Stdin, opts.Stdout, opts.Stderr, opts.TTY && resizable} {
		if want {
			expected++
		}
	}
	var errStream, stdin, stdout, stderr, resize httpstream.Stream
	timer := time.NewTimer(creationTimeout)
	defer timer.Stop()
	for received := 0; received < expected; {
		select {
		case s := <-c.arrived:
			var slot *httpstream.Stream
			switch t := s.Headers().Get(corev1.StreamType); {
			case t == corev1.StreamTypeError:
				slot = &errStream
			case t == corev1.StreamTypeStdin:
				slot = &stdin
			case t == corev1.StreamTypeStdout:
				slot = &stdout
			case t == corev1.StreamTypeStderr:
				slot = &stderr
			case t == corev1.StreamTypeResize && resizable:
				slot = &resize
			default:
				logger.V(3).Info("Unexpected stream type", "streamType", t)
				_ = s.Reset()
				continue
			}
			*slot = s // cri-streaming's: a repeated type replaces the first and counts again
			received++
		case <-timer.C:
			logger.V(3).Info("Timed out waiting for the client to create streams", "created", received, "expected", expected)
			return
		case <-c.conn.CloseChan():
			return
		case <-c.ctx.Done():
			return
		}
	}
	v1 := protocol != remotecommand.StreamProtocolV2Name && protocol != remotecommand.StreamProtocolV3Name &&
		protocol != remotecommand.StreamProtocolV4Name
	if v1 { // as 1.0 kubelets did, and the kubelet still does: no status, no stdin
		_ = errStream.Reset()
		if stdin != nil {
			_ = stdin.Close()
		}
	}

	var sizes chan remotecommand.TerminalSize
	if resize != nil {
		sizes = make(chan remotecommand.TerminalSize)
		c.goroutine(func() { decodeSizes(c.ctx, resize, sizes) })
	}
	err = run(c.ctx, readerOrNil(stdin), writerOrNil(stdout), writerOrNil(stderr), opts.TTY, sizes)
	st := status(err)
	if st.Status == statusFailure && st.Reason == reasonInternalError {
		logger.Error(err, "Streaming command failed")
	}
	switch {
	case v1:
		return
	case protocol == remotecommand.StreamProtocolV4Name:
		b, _ := json.Marshal(st)
		_, err = errStream.Write(b)
	case st.Status != statusSuccess:
		_, err = errStream.Write([]byte(st.Message))
	}
	if err != nil {
		logger.V(4).Info("Writing the status of a streaming command", "err", err)
	}
}

// decodeSizes sends the terminal sizes the client writes on the resize stream, until it ends or
// ctx does; it closes sizes.
func decodeSizes(ctx context.Context, resize io.Reader, sizes chan<- remotecommand.TerminalSize) {
	defer close(sizes)
	d := json.NewDecoder(resize)
	for {
		var size remotecommand.TerminalSize
		if err := d.Decode(&size); err != nil {
			return
		}
		select {
		case sizes <- size:
		case <-ctx.Done():
			return
		}
	}
}

func readerOrNil(s httpstream.Stream) io.Reader {
	if s == nil {
		return nil
	}
	return s
}

func writerOrNil(s httpstream.Stream) io.WriteCloser {
	if s == nil {
		return nil
	}
	return s
}

const (
	statusSuccess       = "Success"
	statusFailure       = "Failure"
	reasonInternalError = "InternalError"
)

// commandStatus is the status written on the error stream, as cri-streaming writes it (JSON in
// v4, metav1.Status's fields; only a failure's message before).
type commandStatus struct {
	Status  string         `json:"status,omitempty"`
	Message string         `json:"message,omitempty"`
	Reason  string         `json:"reason,omitempty"`
	Details *statusDetails `json:"details,omitempty"`
	Code    int32          `json:"code,omitempty"`
}

type statusDetails struct {
	Causes []statusCause `json:"causes,omitempty"`
}

type statusCause struct {
	Type    string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// internalErrorStatus is cri-streaming's status of a failure other than a command's exit code.
func internalErrorStatus(err error) *commandStatus {
	return &commandStatus{Status: statusFailure, Reason: reasonInternalError, Code: http.StatusInternalServerError,
		Message: fmt.Sprintf("Internal error occurred: %v", err)}
}
