package e2ecri

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vk-static/vk-static/test/support/testenv"
)

// kubectl runs the control plane's kubectl as the admin.
type kubectl struct{ path, kubeconfig, home string }

func newKubectl(t *testing.T) *kubectl {
	t.Helper()
	path, err := env.Kubectl()
	require.NoError(t, err)
	dir := t.TempDir()
	k := &kubectl{path: path, kubeconfig: filepath.Join(dir, "admin.kubeconfig"), home: dir}
	require.NoError(t, testenv.WriteKubeconfig(k.kubeconfig, env.AdminConfig))
	return k
}

func (k *kubectl) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, k.path, append([]string{"--kubeconfig", k.kubeconfig}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+k.home) // its discovery cache stays out of the real home
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// output runs kubectl args to its end (a minute at most) and returns its standard output.
func (k *kubectl) output(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stderr strings.Builder
	cmd := k.command(ctx, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "kubectl %s: %s", strings.Join(args, " "), stderr.String())
	return string(out)
}

// stream runs kubectl args in the background until the test ends; lines delivers its
// standard output a line at a time.
type stream struct {
	lines chan string
	mu    sync.Mutex
	err   strings.Builder
}

func (k *kubectl) stream(t *testing.T, args ...string) *stream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := k.command(ctx, args...)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	s := &stream{lines: make(chan string, 1000)}
	cmd.Stderr = lockedWriter{s}
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
		close(s.lines)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		_ = cmd.Wait()
	})
	return s
}

type lockedWriter struct{ s *stream }

func (w lockedWriter) Write(p []byte) (int, error) {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	return w.s.err.Write(p)
}

func (s *stream) stderr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err.String()
}

// next returns the next line, failing the test when none comes within timeout.
func (s *stream) next(t *testing.T, timeout time.Duration) string {
	t.Helper()
	select {
	case line, ok := <-s.lines:
		if !ok {
			t.Fatalf("kubectl ended; stderr: %s", s.stderr())
		}
		return line
	case <-time.After(timeout):
		t.Fatalf("no line within %s; stderr: %s", timeout, s.stderr())
	}
	return ""
}
