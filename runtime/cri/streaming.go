package cri

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/transport/spdy"
	clientexec "k8s.io/client-go/util/exec"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	utilexec "k8s.io/utils/exec"

	"github.com/vk-static/vk-static/provider"
)

// Exec runs cmd in the container through the runtime's streaming server: CRI Exec gives its
// URL, client-go's SPDY executor streams aio. A non-zero exit is a utilexec.CodeExitError.
func (r *Runtime) Exec(ctx context.Context, containerID string, cmd []string, aio provider.AttachIO) error {
	if len(cmd) == 0 {
		return provider.InvalidInput("exec: no command")
	}
	resp, err := r.rs.Exec(ctx, &runtimeapi.ExecRequest{
		ContainerId: containerID, Cmd: cmd, Tty: aio.TTY(),
		Stdin: aio.Stdin() != nil, Stdout: aio.Stdout() != nil, Stderr: aio.Stderr() != nil && !aio.TTY(),
	})
	if err != nil {
		return notFound(fmt.Errorf("exec: %w", err), "container", containerID)
	}
	return stream(ctx, resp.GetUrl(), aio)
}

// Attach connects aio to the container's main process through the runtime's streaming server.
func (r *Runtime) Attach(ctx context.Context, containerID string, aio provider.AttachIO) error {
	resp, err := r.rs.Attach(ctx, &runtimeapi.AttachRequest{
		ContainerId: containerID, Tty: aio.TTY(),
		Stdin: aio.Stdin() != nil, Stdout: aio.Stdout() != nil, Stderr: aio.Stderr() != nil && !aio.TTY(),
	})
	if err != nil {
		return notFound(fmt.Errorf("attach: %w", err), "container", containerID)
	}
	return stream(ctx, resp.GetUrl(), aio)
}

// stream runs the remote command protocol against a streaming server URL with aio's streams.
func stream(ctx context.Context, rawURL string, aio provider.AttachIO) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return fmt.Errorf("streaming server URL %q: %w", rawURL, err)
	}
	exec, err := remotecommand.NewSPDYExecutor(&rest.Config{}, http.MethodPost, u)
	if err != nil {
		return fmt.Errorf("streaming server %s: %w", u.Host, err)
	}
	opts := remotecommand.StreamOptions{Tty: aio.TTY()}
	if in := aio.Stdin(); in != nil {
		opts.Stdin = in
	}
	if out := aio.Stdout(); out != nil {
		opts.Stdout = out
	}
	if e := aio.Stderr(); e != nil && !aio.TTY() {
		opts.Stderr = e
	}
	if aio.TTY() && aio.Resize() != nil {
		opts.TerminalSizeQueue = &sizeQueue{ctx: ctx, sizes: aio.Resize()}
	}
	err = exec.StreamWithContext(ctx, opts)
	var exit clientexec.CodeExitError
	if errors.As(err, &exit) {
		return utilexec.CodeExitError{Err: exit.Err, Code: exit.Code}
	}
	return err
}

// sizeQueue hands the client's terminal sizes to the executor.
type sizeQueue struct {
	ctx   context.Context
	sizes <-chan provider.TermSize
}

func (q *sizeQueue) Next() *remotecommand.TerminalSize {
	select {
	case s, ok := <-q.sizes:
		if !ok {
			return nil
		}
		return &remotecommand.TerminalSize{Width: s.Width, Height: s.Height}
	case <-q.ctx.Done():
		return nil
	}
}

// PortForward connects stream to port in the sandbox's network: CRI PortForward gives the
// streaming server's URL, and one SPDY connection carries the port-forward protocol's error
// and data streams for the port.
func (r *Runtime) PortForward(ctx context.Context, sandboxID string, port int32, stream io.ReadWriteCloser) error {
	resp, err := r.rs.PortForward(ctx, &runtimeapi.PortForwardRequest{PodSandboxId: sandboxID, Port: []int32{port}})
	if err != nil {
		return notFound(fmt.Errorf("port-forward: %w", err), "sandbox", sandboxID)
	}
	u, err := url.Parse(resp.GetUrl())
	if err != nil {
		return fmt.Errorf("streaming server URL %q: %w", resp.GetUrl(), err)
	}
	transport, upgrader, err := spdy.RoundTripperFor(&rest.Config{})
	if err != nil {
		return err
	}
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, u)
	conn, _, err := dialer.Dial(portforward.PortForwardProtocolV1Name)
	if err != nil {
		return fmt.Errorf("port-forward: connect to the streaming server %s: %w", u.Host, err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()

	headers := http.Header{}
	headers.Set(corev1.PortHeader, strconv.Itoa(int(port)))
	headers.Set(corev1.PortForwardRequestIDHeader, "0")
	headers.Set(corev1.StreamType, corev1.StreamTypeError)
	errStream, err := conn.CreateStream(headers)
	if err != nil {
		return fmt.Errorf("port-forward: error stream: %w", err)
	}
	_ = errStream.Close() // nothing is sent on it
	headers.Set(corev1.StreamType, corev1.StreamTypeData)
	data, err := conn.CreateStream(headers)
	if err != nil {
		return fmt.Errorf("port-forward: data stream: %w", err)
	}

	remoteErr := make(chan error, 1)
	go func() {
		msg, err := io.ReadAll(errStream)
		switch {
		case err != nil:
			remoteErr <- fmt.Errorf("port-forward: read the error stream: %w", err)
		case len(msg) > 0:
			remoteErr <- fmt.Errorf("port-forward to port %d: %s", port, msg)
		default:
			remoteErr <- nil
		}
	}()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		// The client's end: when it stops sending, half-close the data stream.
		_, _ = io.Copy(data, stream)
		_ = data.Close()
	}()
	_, copyErr := io.Copy(stream, data)
	_ = stream.Close()
	data.Reset()
	conn.Close()
	wg.Wait()
	if err := <-remoteErr; err != nil && ctx.Err() == nil {
		return err
	}
	if copyErr != nil && ctx.Err() == nil && !errors.Is(copyErr, io.EOF) && !httpstream.IsUpgradeFailure(copyErr) {
		return fmt.Errorf("port-forward: %w", copyErr)
	}
	return nil
}
