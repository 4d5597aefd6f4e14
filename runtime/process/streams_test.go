package process

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	utilexec "k8s.io/utils/exec"

	"github.com/vk-static/vk-static/lifecycle"
	"github.com/vk-static/vk-static/provider"
	"github.com/vk-static/vk-static/test/support/syncbuf"
)

func TestExec(t *testing.T) {
	r := newTestRuntime(t, Config{})
	dir, err := os.MkdirTemp("", "workdir")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	id := run(t, r, lifecycle.ContainerConfig{Command: []string{"sleep", "1000"}, Env: []string{testPath, "FOO=bar"}, WorkingDir: dir})

	for _, tc := range []struct {
		name           string
		cmd            []string
		stdin          string
		stdout, stderr string
		code           int
	}{
		{"environment and working directory", []string{"sh", "-c", `echo "$FOO $(pwd)"`}, "", "bar " + dir + "\n", "", 0},
		{"exit code", []string{"sh", "-c", "echo out; echo err >&2; exit 7"}, "", "out\n", "err\n", 7},
		{"stdin", []string{"sh", "-c", "tr a-z A-Z"}, "hello\nworld\n", "HELLO\nWORLD\n", "", 0},
		{"same user as the workload", []string{"id", "-u"}, "", fmt.Sprintf("%d\n", r.defaultUser.UID), "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			aio := &testAttachIO{stdout: &syncbuf.Buffer{}, stderr: &syncbuf.Buffer{}}
			if tc.stdin != "" {
				aio.stdin = strings.NewReader(tc.stdin)
			}
			err := r.Exec(context.Background(), id, tc.cmd, aio)
			if tc.code == 0 {
				require.NoError(t, err)
			} else {
				var exitErr utilexec.ExitError
				require.ErrorAs(t, err, &exitErr)
				assert.Equal(t, tc.code, exitErr.ExitStatus())
			}
			assert.Equal(t, tc.stdout, aio.stdout.String())
			assert.Equal(t, tc.stderr, aio.stderr.String())
		})
	}

	t.Run("not found", func(t *testing.T) {
		err := r.Exec(context.Background(), id, []string{"nope"}, &testAttachIO{stdout: &syncbuf.Buffer{}})
		require.Error(t, err)
		var exitErr utilexec.ExitError
		assert.False(t, errors.As(err, &exitErr))
		assert.Contains(t, err.Error(), `executable file not found in $PATH`)
	})

	t.Run("context ends the command", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		out := &syncbuf.Buffer{}
		done := make(chan error)
		go func() {
			done <- r.Exec(ctx, id, []string{"sh", "-c", "echo started; exec sleep 1000"}, &testAttachIO{stdout: out})
		}()
		require.Eventually(t, func() bool { return out.String() == "started\n" }, waitFor, tick)
		cancel()
		assert.ErrorIs(t, <-done, context.Canceled)
	})

	t.Run("tty", func(t *testing.T) {
		resize := make(chan provider.TermSize, 1)
		resize <- provider.TermSize{Width: 123, Height: 45}
		stdinR, stdinW := io.Pipe()
		defer stdinW.Close()
		out := &syncbuf.Buffer{}
		done := make(chan error)
		go func() {
			done <- r.Exec(context.Background(), id, []string{"sh", "-c", `test -t 0 && echo is-a-tty; read line; stty size; echo "got $line"`},
				&testAttachIO{stdin: stdinR, stdout: out, tty: true, resize: resize})
		}()
		require.Eventually(t, func() bool { return strings.Contains(out.String(), "is-a-tty") }, waitFor, tick)
		_, err := stdinW.Write([]byte("typed\n"))
		require.NoError(t, err)
		require.NoError(t, <-done)
		assert.Contains(t, out.String(), "45 123")
		assert.Contains(t, out.String(), "got typed")
	})

	t.Run("not running", func(t *testing.T) {
		id := create(t, r, lifecycle.ContainerConfig{Command: []string{"true"}})
		err := r.Exec(context.Background(), id, []string{"true"}, &testAttachIO{})
		assert.ErrorIs(t, err, ErrNotRunning)
		assert.False(t, provider.IsNotFound(err))
	})
}

func TestAttach(t *testing.T) {
	r := newTestRuntime(t, Config{})
	id := run(t, r, lifecycle.ContainerConfig{
		Command:   []string{"sh", "-c", `while read line; do echo "out $line"; echo "err $line" >&2; done; echo bye`},
		Stdin:     true,
		StdinOnce: true,
	})
	stdinR, stdinW := io.Pipe()
	aio := &testAttachIO{stdin: stdinR, stdout: &syncbuf.Buffer{}, stderr: &syncbuf.Buffer{}}
	done := make(chan error)
	go func() { done <- r.Attach(context.Background(), id, aio) }()
	_, err := stdinW.Write([]byte("one\n"))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return aio.stdout.String() == "out one\n" && aio.stderr.String() == "err one\n" }, waitFor, tick)
	require.NoError(t, stdinW.Close()) // StdinOnce: the workload's stdin ends with it
	require.NoError(t, <-done)
	s := waitExited(t, r, id)
	assert.Equal(t, int32(0), s.ExitCode)
	assert.Equal(t, []string{"out one", "bye"}, logContents(t, s.LogPath, "stdout"))
}

func TestAttachTTY(t *testing.T) {
	r := newTestRuntime(t, Config{})
	id := run(t, r, lifecycle.ContainerConfig{
		Command: []string{"sh", "-c", `test -t 1 && echo tty; while read line; do stty size; echo "got $line"; done`},
		Stdin:   true,
		TTY:     true,
	})
	stdinR, stdinW := io.Pipe()
	resize := make(chan provider.TermSize, 1)
	resize <- provider.TermSize{Width: 99, Height: 11}
	aio := &testAttachIO{stdin: stdinR, stdout: &syncbuf.Buffer{}, tty: true, resize: resize}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- r.Attach(ctx, id, aio) }()
	require.Eventually(t, func() bool {
		_, err := stdinW.Write([]byte("x\n"))
		require.NoError(t, err)
		return strings.Contains(aio.stdout.String(), "11 99")
	}, waitFor, 50*time.Millisecond)
	cancel()
	assert.ErrorIs(t, <-done, context.Canceled)
	stdinW.Close()
	assert.Contains(t, logContents(t, status(t, r, id).LogPath, "stdout"), "tty")
	assert.Equal(t, lifecycle.ContainerRunning, status(t, r, id).State, "detaching leaves it running")
}

func TestPortForward(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	for _, tc := range []struct {
		name    string
		listen  string
		nodeIPs []string
	}{
		{"loopback", "127.0.0.1", nil},
		{"a node address only", "127.0.0.2", []string{"127.0.0.2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newTestRuntime(t, Config{NodeIPs: tc.nodeIPs})
			l, err := net.Listen("tcp", tc.listen+":0")
			require.NoError(t, err)
			port := l.Addr().(*net.TCPAddr).Port
			require.NoError(t, l.Close())
			addr := net.JoinHostPort(tc.listen, strconv.Itoa(port))
			id := run(t, r, lifecycle.ContainerConfig{Command: []string{self}, Env: []string{echoServerEnv + "=" + addr}, User: &lifecycle.User{}})
			logPath := status(t, r, id).LogPath
			require.Eventually(t, func() bool { return len(logContents(t, logPath, "stdout")) > 0 }, waitFor, tick, "%+v", readLog(t, logPath))
			sb := status(t, r, id).SandboxID

			client, server := net.Pipe()
			done := make(chan error)
			go func() { done <- r.PortForward(context.Background(), sb, int32(port), server) }()
			_, err = client.Write([]byte("ping\n"))
			require.NoError(t, err)
			line, err := bufio.NewReader(client).ReadString('\n')
			require.NoError(t, err)
			assert.Equal(t, "echo: ping\n", line)
			require.NoError(t, client.Close())
			require.NoError(t, <-done)
		})
	}

	t.Run("nothing listening", func(t *testing.T) {
		r := newTestRuntime(t, Config{})
		client, server := net.Pipe()
		defer client.Close()
		err := r.PortForward(context.Background(), sandbox(t, r), 1, server)
		assert.Error(t, err)
	})
}
