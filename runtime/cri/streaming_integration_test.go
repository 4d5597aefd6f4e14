package cri_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	utilexec "k8s.io/utils/exec"

	"github.com/vk-static/vk-static/lifecycle"
	"github.com/vk-static/vk-static/provider"
	"github.com/vk-static/vk-static/runtime/cri"
	"github.com/vk-static/vk-static/test/support/syncbuf"
	"github.com/vk-static/vk-static/test/support/testimage"
)

// attachIO is a provider.AttachIO with stdout and stderr buffers and no terminal.
type attachIO struct {
	stdin          io.Reader
	stdout, stderr syncbuf.Buffer
}

func (a *attachIO) Stdin() io.Reader                 { return a.stdin }
func (a *attachIO) Stdout() io.WriteCloser           { return &a.stdout }
func (a *attachIO) Stderr() io.WriteCloser           { return &a.stderr }
func (a *attachIO) TTY() bool                        { return false }
func (a *attachIO) Resize() <-chan provider.TermSize { return nil }

// runContainer runs the pod's first container with args and waits until it runs.
func runContainer(t *testing.T, rt *cri.Runtime, sandboxID string, sandbox *lifecycle.SandboxConfig, args ...string) (string, *lifecycle.ContainerConfig) {
	t.Helper()
	ctx := context.Background()
	cfg := containerFor(t, rt, sandbox, args...)
	id, err := rt.CreateContainer(ctx, sandboxID, cfg)
	require.NoError(t, err)
	require.NoError(t, rt.StartContainer(ctx, id))
	waitFor(t, rt, id, func(s *lifecycle.ContainerStatus) bool { return s.State == lifecycle.ContainerRunning })
	return id, cfg
}

func TestExecAttachAndPortForward(t *testing.T) {
	ctx := context.Background()
	const image = "localhost/test/cri-serve:1"
	importImage(t, image, testimage.Options{Cmd: []string{"pause"}})
	rt := newRuntime(t, cri.Config{})
	sandboxID, sandbox := sandboxFor(t, rt, testPod("streams", image))
	port := freePort(t)
	id, _ := runContainer(t, rt, sandboxID, sandbox, "serve", "--port", strconv.Itoa(port))

	t.Run("exec runs in the container's filesystem", func(t *testing.T) {
		var aio attachIO
		require.NoError(t, rt.Exec(ctx, id, []string{"workload", "cat", testimage.MarkerPath}, &aio))
		assert.Equal(t, testimage.DefaultMarker, aio.stdout.String())
	})
	t.Run("exec's exit code", func(t *testing.T) {
		var aio attachIO
		err := rt.Exec(ctx, id, []string{"workload", "exit", "--code", "3"}, &aio)
		var exit utilexec.ExitError
		require.True(t, errors.As(err, &exit), "%v (%T)", err, err)
		assert.Equal(t, 3, exit.ExitStatus())
	})
	t.Run("attach sees the main process's output", func(t *testing.T) {
		importImage(t, logImage, testimage.Options{Cmd: []string{"log", "--every", "50ms"}})
		logSandboxID, logSandbox := sandboxFor(t, rt, testPod("attach", logImage))
		logID, _ := runContainer(t, rt, logSandboxID, logSandbox)
		actx, cancel := context.WithCancel(ctx)
		defer cancel()
		var aio attachIO
		done := make(chan error, 1)
		go func() { done <- rt.Attach(actx, logID, &aio) }()
		require.Eventually(t, func() bool { return strings.Contains(aio.stdout.String(), "tick ") }, 10*time.Second, 20*time.Millisecond)
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("attach did not end with its context")
		}
	})
	t.Run("port-forward reaches the served port", func(t *testing.T) {
		local, remote := net.Pipe()
		done := make(chan error, 1)
		go func() { done <- rt.PortForward(ctx, sandboxID, int32(port), remote) }()
		fmt.Fprintf(local, "GET / HTTP/1.0\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(local), nil)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Contains(t, string(body), "hello from")
		local.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("port-forward did not end when the client closed")
		}
	})
}

// freePort is a TCP port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
