package mock

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	utilexec "k8s.io/utils/exec"

	"github.com/vk-static/vk-static/provider"
)

// output is a client's output stream.
type output struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	closed bool
}

func (o *output) Write(b []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(b)
}

func (o *output) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.closed = true
	return nil
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// client is a provider.AttachIO with the streams a test asked for; nil fields are streams it did
// not ask for.
type client struct {
	stdin          io.Reader
	stdout, stderr *output
	tty            bool
}

func (c *client) Stdin() io.Reader { return c.stdin }
func (c *client) Stdout() io.WriteCloser {
	if c.stdout == nil {
		return nil // not a typed nil
	}
	return c.stdout
}
func (c *client) Stderr() io.WriteCloser {
	if c.stderr == nil {
		return nil
	}
	return c.stderr
}
func (c *client) TTY() bool                        { return c.tty }
func (c *client) Resize() <-chan provider.TermSize { return nil }

func newClient(stdin string) *client {
	c := &client{stdout: &output{}, stderr: &output{}}
	if stdin != "" {
		c.stdin = strings.NewReader(stdin)
	}
	return c
}

// exitCode is the exit code an exec error carries, the way the API finds it; -1 for none.
func exitCode(err error) int {
	var exit utilexec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitStatus()
	}
	return -1
}

func execPod() *corev1.Pod {
	pod := newPod("web", nil)
	pod.Spec.Containers[0].Env = []corev1.EnvVar{
		{Name: "A", Value: "1"},
		{Name: "FROM_FIELD", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		{Name: "B", Value: "two words"},
	}
	return pod
}

func TestRunInContainer(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	require.NoError(t, h.p.CreatePod(ctx, execPod()))
	named := newPod("named", nil)
	named.Spec.Hostname = "db-0"
	require.NoError(t, h.p.CreatePod(ctx, named))

	for _, tc := range []struct {
		name       string
		pod        string
		cmd        []string
		stdin      string
		tty        bool
		wantOut    string
		wantErrOut string
		wantCode   int // -1: success
	}{
		{name: "echo", cmd: []string{"echo", "hello", "world"}, wantOut: "hello world\n", wantCode: -1},
		{name: "echo by path", cmd: []string{"/bin/echo", "hi"}, wantOut: "hi\n", wantCode: -1},
		{name: "echo nothing", cmd: []string{"echo"}, wantOut: "\n", wantCode: -1},
		{name: "cat", cmd: []string{"cat"}, stdin: "line 1\nline 2\n", wantOut: "line 1\nline 2\n", wantCode: -1},
		{name: "cat without stdin", cmd: []string{"cat"}, wantCode: -1},
		{name: "env: literal values only", cmd: []string{"env"}, wantOut: "A=1\nB=two words\n", wantCode: -1},
		{name: "hostname", cmd: []string{"hostname"}, wantOut: "web\n", wantCode: -1},
		{name: "hostname from the spec", pod: "named", cmd: []string{"hostname"}, wantOut: "db-0\n", wantCode: -1},
		{name: "unknown command", cmd: []string{"ls", "-l"}, wantErrOut: "ls: command not found\n", wantCode: 127},
		{name: "unknown command on a terminal", cmd: []string{"/bin/sh"}, tty: true, wantOut: "/bin/sh: command not found\n", wantCode: 127},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(tc.stdin)
			if tc.tty {
				c.stderr = nil // as the API gives it: a terminal has one output
				c.tty = true
			}
			pod := "web"
			if tc.pod != "" {
				pod = tc.pod
			}
			err := h.p.RunInContainer(ctx, "ns", pod, "app", tc.cmd, c)
			assert.Equal(t, tc.wantCode, exitCode(err), "exit code of %v", err)
			if tc.wantCode == -1 {
				assert.NoError(t, err)
			}
			assert.Equal(t, tc.wantOut, c.stdout.String(), "stdout")
			if c.stderr != nil {
				assert.Equal(t, tc.wantErrOut, c.stderr.String(), "stderr")
			}
			assert.False(t, c.stdout.closed, "the streams are the caller's to close")
		})
	}

	t.Run("no stdout asked for", func(t *testing.T) {
		assert.NoError(t, h.p.RunInContainer(ctx, "ns", "web", "app", []string{"echo", "x"}, &client{}))
	})
}

func TestRunInContainerRefusals(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	require.NoError(t, h.p.CreatePod(ctx, newPod("web", nil)))
	require.NoError(t, h.p.CreatePod(ctx, newPod("slow", map[string]string{CreateDelayAnnotation: "1m"})))
	job := newPod("job", map[string]string{RunDurationAnnotation: "1s"})
	job.Spec.RestartPolicy = corev1.RestartPolicyNever
	require.NoError(t, h.p.CreatePod(ctx, job))
	h.step(t, time.Second)
	h.next(t, "job", phase(corev1.PodSucceeded))

	for _, tc := range []struct {
		name, pod, container string
		cmd                  []string
		check                func(error) bool
	}{
		{name: "unknown pod", pod: "ghost", container: "app", cmd: []string{"echo"}, check: provider.IsNotFound},
		{name: "unknown container", pod: "web", container: "nope", cmd: []string{"echo"}, check: provider.IsNotFound},
		{name: "no command", pod: "web", container: "app", check: provider.IsInvalidInput},
		{name: "pod still being created", pod: "slow", container: "app", cmd: []string{"echo"}, check: notRunning},
		{name: "finished pod", pod: "job", container: "app", cmd: []string{"echo"}, check: notRunning},
		{name: "completed init container", pod: "web", container: "init", cmd: []string{"echo"}, check: notRunning},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient("")
			err := h.p.RunInContainer(ctx, "ns", tc.pod, tc.container, tc.cmd, c)
			assert.True(t, tc.check(err), "%v", err)
			assert.Equal(t, -1, exitCode(err), "no command ran, so no exit code")
			assert.Empty(t, c.stdout.String())
		})
	}
}

// notRunning recognises the error for a container that exists but does not run: neither
// NotFound nor InvalidInput (it may run later).
func notRunning(err error) bool {
	return err != nil && strings.Contains(err.Error(), "is not running") && !provider.IsNotFound(err) && !provider.IsInvalidInput(err)
}

// cat runs until its input ends, its ctx ends, or its container stops (killed: 137).
func TestRunInContainerCatEnds(t *testing.T) {
	for _, tc := range []struct {
		name     string
		end      func(h *harness, cancel context.CancelFunc, stdin *io.PipeWriter)
		wantErr  error
		wantCode int
	}{
		{name: "stdin closed", end: func(_ *harness, _ context.CancelFunc, stdin *io.PipeWriter) { stdin.Close() }, wantCode: -1},
		{name: "ctx", end: func(_ *harness, cancel context.CancelFunc, _ *io.PipeWriter) { cancel() }, wantErr: context.Canceled, wantCode: -1},
		{name: "container stopped", end: func(h *harness, _ context.CancelFunc, _ *io.PipeWriter) {
			_ = h.p.DeletePod(context.Background(), newPod("web", nil))
		}, wantCode: ExitCodeKilled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			require.NoError(t, h.p.CreatePod(context.Background(), newPod("web", nil)))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			in, stdin := io.Pipe()
			defer stdin.Close() // ends the Read a returned cat leaves pending, as the API would
			c := newClient("")
			c.stdin = in
			done := make(chan error, 1)
			go func() { done <- h.p.RunInContainer(ctx, "ns", "web", "app", []string{"cat"}, c) }()

			_, err := stdin.Write([]byte("typed\n"))
			require.NoError(t, err)
			require.Eventually(t, func() bool { return c.stdout.String() == "typed\n" }, 10*time.Second, time.Millisecond)
			select {
			case err := <-done:
				t.Fatalf("cat ended on its own: %v", err)
			default:
			}
			tc.end(h, cancel, stdin)
			select {
			case err := <-done:
				if tc.wantErr != nil {
					assert.ErrorIs(t, err, tc.wantErr)
				} else if tc.wantCode == -1 {
					assert.NoError(t, err)
				}
				assert.Equal(t, tc.wantCode, exitCode(err), "%v", err)
			case <-time.After(10 * time.Second):
				t.Fatal("cat did not end")
			}
		})
	}
}
