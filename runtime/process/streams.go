package process

import (
	"context"
	"io"
	"os"
	"sync"

	"k8s.io/utils/clock"

	"github.com/vk-static/vk-static/provider"
	"github.com/vk-static/vk-static/runtime/process/internal/protocol"
	"github.com/vk-static/vk-static/runtime/process/internal/pty"
	"github.com/vk-static/vk-static/runtime/process/supervisor"
)

// clientStreams are the runtime's ends of an exec's or attach's stdio: pipes (or a pty master)
// whose other ends go to the supervisor, and the copies between them and a provider.AttachIO.
type clientStreams struct {
	// names and remote are what is handed to the supervisor, in order; closed once sent.
	names  []string
	remote []*os.File

	stdin   *os.File // written from AttachIO.Stdin
	outputs []*os.File
	master  *os.File // the pty master (exec with a TTY): stdin and stdout both

	copies sync.WaitGroup // the output copies
}

// newExecStreams makes the streams of an exec: a pty when the client asked for a terminal,
// else a pipe for each stream it asked for.
func newExecStreams(aio provider.AttachIO) (*clientStreams, error) {
	s := &clientStreams{}
	if aio.TTY() {
		master, slave, err := pty.Open()
		if err != nil {
			return nil, err
		}
		s.master = master
		s.names, s.remote = []string{protocol.FdTTY}, []*os.File{slave}
		if aio.Stdin() != nil {
			s.stdin = master
		}
		return s, nil
	}
	return s, s.pipes(aio.Stdin() != nil, aio.Stdout() != nil, aio.Stderr() != nil)
}

// pipes makes a pipe for each stream wanted; the runtime's ends are non-blocking (os.Pipe),
// so closing them ends a pending copy.
func (s *clientStreams) pipes(stdin, stdout, stderr bool) error {
	if stdin {
		r, w, err := os.Pipe()
		if err != nil {
			s.close()
			return err
		}
		s.stdin = w
		s.names, s.remote = append(s.names, protocol.FdStdin), append(s.remote, r)
	}
	for _, want := range []struct {
		on   bool
		name string
	}{{stdout, protocol.FdStdout}, {stderr, protocol.FdStderr}} {
		if !want.on {
			continue
		}
		r, w, err := os.Pipe()
		if err != nil {
			s.close()
			return err
		}
		s.outputs = append(s.outputs, r)
		s.names, s.remote = append(s.names, want.name), append(s.remote, w)
	}
	return nil
}

// closeRemote closes the runtime's copies of the supervisor's ends (after sending them), so
// that an output reaches EOF when the supervisor's side closes.
func (s *clientStreams) closeRemote() {
	for _, f := range s.remote {
		f.Close()
	}
	s.remote = nil
}

// start copies between aio and the runtime's ends. The stdin copy is not waited for: its Read
// of the client's stdin may stay pending until the caller closes it (provider.AttachIO's contract).
func (s *clientStreams) start(aio provider.AttachIO) {
	if s.stdin != nil {
		in, src := s.stdin, aio.Stdin()
		go func() {
			_, _ = io.Copy(in, src)
			if in != s.master {
				in.Close() // end of input; a terminal's input ends with the call
			}
		}()
	}
	copyTo := func(dst io.Writer, src *os.File) {
		s.copies.Add(1)
		go func() {
			defer s.copies.Done()
			_, _ = io.Copy(dst, src) // a pty master ends with EIO: the terminal is gone
		}()
	}
	if s.master != nil {
		if out := aio.Stdout(); out != nil {
			copyTo(out, s.master)
		}
		return
	}
	i := 0
	for _, name := range s.names {
		var dst io.Writer
		switch name {
		case protocol.FdStdout:
			dst = aio.Stdout()
		case protocol.FdStderr:
			dst = aio.Stderr()
		default:
			continue
		}
		copyTo(dst, s.outputs[i])
		i++
	}
}

// resizeLoop applies the client's terminal sizes with apply until ctx ends.
func resizeLoop(ctx context.Context, aio provider.AttachIO, apply func(provider.TermSize)) {
	sizes := aio.Resize()
	if sizes == nil {
		return
	}
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case size, ok := <-sizes:
				if !ok {
					return
				}
				apply(size)
			}
		}
	}()
}

// finish waits for the outputs to end — for drain at most once the command has ended, so that
// a process that keeps them open does not hold the call — then closes everything.
func (s *clientStreams) finish(ctx context.Context, clk clock.Clock, drain bool) {
	done := make(chan struct{})
	go func() { s.copies.Wait(); close(done) }()
	if drain {
		select {
		case <-done:
		case <-ctx.Done():
		case <-clk.After(supervisor.OutputDrainTimeout):
		}
	}
	s.close()
	<-done
}

func (s *clientStreams) close() {
	s.closeRemote()
	for _, f := range s.outputs {
		f.Close()
	}
	if s.stdin != nil {
		s.stdin.Close()
	}
	if s.master != nil {
		s.master.Close()
	}
}
