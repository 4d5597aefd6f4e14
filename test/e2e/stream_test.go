package e2e

import (
	"bufio"
	"context"
	"io"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vk-static/vk-static/test/support/syncbuf"
)

// streaming is a running command (kubectl, a vk-static subcommand) whose stdout is read line by
// line as it comes.
type streaming struct {
	cmd    *exec.Cmd
	name   string         // the command as failures name it
	stdin  io.WriteCloser // nil unless asked for
	lines  chan string    // closed at the end of stdout
	stderr *syncbuf.Buffer
	cancel context.CancelFunc
}

// startStreaming starts cmd (made with a context that cancel ends); withStdin gives it a pipe as
// its input. The process is killed when the test ends, if it has not been stopped before.
func startStreaming(t *testing.T, cmd *exec.Cmd, cancel context.CancelFunc, withStdin bool, name string) *streaming {
	t.Helper()
	s := &streaming{cmd: cmd, name: name, lines: make(chan string, 1000), stderr: &syncbuf.Buffer{}, cancel: cancel}
	s.cmd.Stderr = s.stderr
	stdout, err := s.cmd.StdoutPipe()
	require.NoError(t, err)
	if withStdin {
		s.stdin, err = s.cmd.StdinPipe()
		require.NoError(t, err)
	}
	require.NoError(t, s.cmd.Start())
	go func() {
		defer close(s.lines)
		scanner := bufio.NewScanner(stdout)
		for scanner.Scan() {
			s.lines <- scanner.Text()
		}
	}()
	t.Cleanup(s.stop)
	return s
}

// next returns the next line of output, failing the test if none comes within timeout.
func (s *streaming) next(t *testing.T, timeout time.Duration) string {
	t.Helper()
	select {
	case line, ok := <-s.lines:
		require.True(t, ok, "%s ended its output; stderr %q", s.name, s.stderr.String())
		return line
	case <-time.After(timeout):
		t.Fatalf("%s printed no line within %s; stderr %q", s.name, timeout, s.stderr.String())
		return ""
	}
}

// until reads lines until one satisfies match, failing the test after timeout.
func (s *streaming) until(t *testing.T, timeout time.Duration, what string, match func(string) bool) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var seen []string
	for {
		left := time.Until(deadline)
		if left <= 0 {
			t.Fatalf("%s: no %s within %s among %q; stderr %q", s.name, what, timeout, seen, s.stderr.String())
		}
		select {
		case line, ok := <-s.lines:
			if !ok {
				t.Fatalf("%s ended before %s, after %q; stderr %q", s.name, what, seen, s.stderr.String())
			}
			if match(line) {
				return line
			}
			seen = append(seen, line)
		case <-time.After(left):
		}
	}
}

// end waits until the output ends by itself and the command exits, failing the test after
// timeout; it returns the lines not read before and the exit code.
func (s *streaming) end(t *testing.T, timeout time.Duration) ([]string, int) {
	t.Helper()
	deadline := time.After(timeout)
	var rest []string
	for {
		select {
		case line, ok := <-s.lines:
			if ok {
				rest = append(rest, line)
				continue
			}
			_ = s.cmd.Wait()
			return rest, s.cmd.ProcessState.ExitCode()
		case <-deadline:
			t.Fatalf("%s still runs after %s (printed %q since); stderr %q", s.name, timeout, rest, s.stderr.String())
		}
	}
}

// stop kills the command (if it runs) and waits for it.
func (s *streaming) stop() {
	if s.stdin != nil {
		_ = s.stdin.Close()
	}
	s.cancel()
	_ = s.cmd.Wait()
	for range s.lines { // the reader ends with stdout
	}
}
