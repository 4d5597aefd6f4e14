package main

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// build compiles the program as the images have it.
func build(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "workload")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

func TestModes(t *testing.T) {
	bin := build(t)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "f"), []byte("content\n"), 0o644))
	for _, tc := range []struct {
		args   []string
		code   int
		stdout string
	}{
		{args: []string{"echo", "a", "b"}, stdout: "a b\n"},
		{args: []string{"cat", filepath.Join(dir, "f")}, stdout: "content\n"},
		{args: []string{"ls", dir}, stdout: "f\n"},
		{args: []string{"exit", "--code", "3"}, code: 3},
		{args: []string{"sleep", "10ms"}},
		{args: []string{"cat", filepath.Join(dir, "missing")}, code: 1},
		{args: []string{"nope"}, code: 2},
		{args: []string{"serve", "--bad-flag"}, code: 2},
		{args: nil, code: 2},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out, err := exec.Command(bin, tc.args...).Output()
			code := 0
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				code = exit.ExitCode()
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tc.code, code)
			if tc.code == 0 {
				assert.Equal(t, tc.stdout, string(out))
			}
		})
	}
	t.Run("env", func(t *testing.T) {
		cmd := exec.Command(bin, "env")
		cmd.Env = []string{"A=1"}
		out, err := cmd.Output()
		require.NoError(t, err)
		assert.Equal(t, "A=1\n", string(out))
	})
}

// TestLongRunningModesStopOnSIGTERM: pause, sleep, log and serve run until SIGTERM and then
// exit 0, as a container's stop expects.
func TestLongRunningModesStopOnSIGTERM(t *testing.T) {
	bin := build(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	for _, tc := range []struct {
		args        []string
		stderrReady bool // a line on stderr says SIGTERM is handled
		ready       func(t *testing.T, stdout *bufio.Reader)
	}{
		{args: []string{"pause"}, stderrReady: true},
		{args: []string{"sleep"}, stderrReady: true},
		{args: []string{"log", "--every", "10ms"}, ready: func(t *testing.T, stdout *bufio.Reader) {
			host, _ := os.Hostname()
			for _, want := range []string{"tick 1 from " + host + "\n", "tick 2 from " + host + "\n"} {
				line, err := stdout.ReadString('\n')
				require.NoError(t, err)
				assert.Equal(t, want, line)
			}
		}},
		{args: []string{"serve", "--port", strconv.Itoa(port)}, ready: func(t *testing.T, stdout *bufio.Reader) {
			_, err := stdout.ReadString('\n') // "serving on …": listening
			require.NoError(t, err)
			resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(port) + "/healthz")
			require.NoError(t, err)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			assert.Equal(t, "ok\n", string(body))
		}},
	} {
		t.Run(tc.args[0], func(t *testing.T) {
			cmd := exec.Command(bin, tc.args...)
			stdout, err := cmd.StdoutPipe()
			require.NoError(t, err)
			stderr, err := cmd.StderrPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			if tc.stderrReady {
				_, err := bufio.NewReader(stderr).ReadString('\n')
				require.NoError(t, err)
			}
			done := make(chan error, 1)
			r := bufio.NewReader(stdout)
			if tc.ready != nil {
				tc.ready(t, r)
			}
			go func() {
				_, _ = io.Copy(io.Discard, r)
				_, _ = io.Copy(io.Discard, stderr)
				done <- cmd.Wait()
			}()
			require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
			select {
			case err := <-done:
				require.NoError(t, err, "exit 0 on SIGTERM")
			case <-time.After(5 * time.Second):
				t.Fatalf("%s still running 5s after SIGTERM", tc.args[0])
			}
		})
	}
}

// serve's options: the address, who says hello and the path it was asked for, or a directory's
// files — what test/e2e's port-forward and example tests serve on a host without python3.
func TestServeOptions(t *testing.T) {
	bin := build(t)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "index-me.txt"), []byte("a file\n"), 0o644))
	get := func(t *testing.T, url string) string {
		t.Helper()
		var body []byte
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			resp, err := http.Get(url)
			require.NoError(c, err)
			defer resp.Body.Close()
			body, err = io.ReadAll(resp.Body)
			require.NoError(c, err)
			assert.Equal(c, http.StatusOK, resp.StatusCode)
		}, 10*time.Second, 20*time.Millisecond, "GET %s", url)
		return string(body)
	}
	for _, tc := range []struct {
		name  string
		args  []string
		paths map[string]string // path → body
	}{
		{"greeting", []string{"--name", "the static pod"}, map[string]string{
			"/": "hello from the static pod\n", "/first": "hello from the static pod at /first\n", "/healthz": "ok\n"}},
		{"files", []string{"--dir", dir}, map[string]string{
			"/index-me.txt": "a file\n", "/healthz": "ok\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
			require.NoError(t, l.Close())
			cmd := exec.Command(bin, append([]string{"serve", "--port", port, "--bind", "127.0.0.1"}, tc.args...)...)
			require.NoError(t, cmd.Start())
			t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
			for path, want := range tc.paths {
				assert.Equal(t, want, get(t, "http://127.0.0.1:"+port+path), path)
			}
			if tc.name == "files" {
				assert.Contains(t, get(t, "http://127.0.0.1:"+port+"/"), `<a href="index-me.txt">index-me.txt</a>`, "a listing")
			}
		})
	}
}
