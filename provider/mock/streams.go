package mock

import (
	"context"
	"errors"
	"io"
)

// errStopped: the container an exec or attach was connected to stopped.
var errStopped = errors.New("the container stopped")

// echo copies in to out until in ends (nil), ctx ends (ctx's error) or stopped is closed
// (errStopped; nil never closes). A Read of in cannot be interrupted, so in is read on a
// goroutine that delivers each chunk to this one; only this one writes to out, so nothing is
// written after echo returns. When echo returns early the goroutine is left in its Read until
// the caller closes in (node's streams contract), and then ends.
func echo(ctx context.Context, in io.Reader, out io.Writer, stopped <-chan struct{}) error {
	chunks := make(chan []byte)
	readErr := make(chan error, 1)
	quit := make(chan struct{})
	defer close(quit)
	go func() {
		buf := make([]byte, 32*1024)
		for {
			n, err := in.Read(buf)
			if n > 0 {
				select {
				case chunks <- append([]byte(nil), buf[:n]...): // a copy: buf is read into again
				case <-quit:
					return
				}
			}
			if err != nil {
				readErr <- err
				return
			}
		}
	}()
	for {
		select {
		case b := <-chunks:
			if _, err := out.Write(b); err != nil {
				return err
			}
		case err := <-readErr:
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		case <-ctx.Done():
			return ctx.Err()
		case <-stopped:
			return errStopped
		}
	}
}
