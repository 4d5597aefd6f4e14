package api

import (
	"context"
	"errors"
	"io"

	"k8s.io/cri-streaming/pkg/streaming/remotecommand"
	utilexec "k8s.io/utils/exec"

	"github.com/vk-static/vk-static/provider"
)

// attachIO is the client's streams, as cri-streaming opened them, in the provider's terms.
type attachIO struct {
	in       io.Reader
	out, err io.WriteCloser
	tty      bool
	resize   chan provider.TermSize
}

func (a *attachIO) Stdin() io.Reader {
	if a.in == nil { // a nil io.Reader, not a typed nil the provider would read from
		return nil
	}
	return a.in
}

func (a *attachIO) Stdout() io.WriteCloser { return nilWriter(a.out) }
func (a *attachIO) Stderr() io.WriteCloser { return nilWriter(a.err) }
func (a *attachIO) TTY() bool              { return a.tty }

func (a *attachIO) Resize() <-chan provider.TermSize {
	if a.resize == nil {
		return nil
	}
	return a.resize
}

func nilWriter(w io.WriteCloser) io.WriteCloser {
	if w == nil {
		return nil
	}
	return w
}

// newAttachIO is the client's streams in the provider's terms; with a terminal, its sizes are
// forwarded until stop is called (after the provider's call has returned).
func newAttachIO(ctx context.Context, in io.Reader, out, errw io.WriteCloser, tty bool, resize <-chan remotecommand.TerminalSize) (aio *attachIO, stop func()) {
	aio = &attachIO{in: in, out: out, err: errw, tty: tty}
	if !tty || resize == nil {
		return aio, func() {}
	}
	sizes := make(chan provider.TermSize, 1)
	aio.resize = sizes
	ctx, cancel := context.WithCancel(ctx)
	go forwardSizes(ctx, resize, sizes)
	return aio, cancel
}

// forwardSizes passes the client's terminal sizes on until ctx ends, dropping a size the
// provider has not taken for a newer one: the caller never blocks on the provider.
func forwardSizes(ctx context.Context, from <-chan remotecommand.TerminalSize, to chan provider.TermSize) {
	for {
		select {
		case <-ctx.Done():
			return
		case s, ok := <-from:
			if !ok {
				return
			}
			size := provider.TermSize{Width: s.Width, Height: s.Height}
			select {
			case to <- size:
			default:
				select { // replace the stale size
				case <-to:
				default:
				}
				select {
				case to <- size:
				default:
				}
			}
		}
	}
}

// isExitError reports whether err carries a command's exit code.
func isExitError(err error) bool {
	var e utilexec.ExitError
	return errors.As(err, &e)
}

// unwrapExitError returns the ExitError inside err, if any, else err: cri-streaming recognises
// an exit code only when the error is one itself.
func unwrapExitError(err error) error {
	var e utilexec.ExitError
	if errors.As(err, &e) {
		return e
	}
	return err
}
