package logwriter

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/vk-static/vk-static/internal/crilog"
)

// Options are a Writer's rotation policy and clock; the zero value never rotates.
type Options struct {
	// MaxSize, when positive, rotates the log before an entry would take its file beyond this
	// many bytes (the kubelet's containerLogMaxSize, 10Mi by default). Zero never rotates.
	MaxSize int64
	// MaxFiles is how many files the log keeps, the current one included (the kubelet's
	// containerLogMaxFiles, 5 by default); at least 2 when MaxSize is set.
	MaxFiles int
	// Clock stamps entries and names rotated files; nil is the real clock.
	Clock Clock
}

// Clock is what a Writer needs of a clock: k8s.io/utils/clock's PassiveClock (a fake one in
// tests) has it, and this package does without that module so that the supervisor binary links
// nothing of k8s.io.
type Clock interface {
	Now() time.Time
}

// realClock is the system's clock.
type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

// MaxLineSize is the longest content one entry carries: a longer line is cut into "P" entries
// of this size and a final "F" — containerd's default max_container_log_line_size.
const MaxLineSize = crilog.MaxLineSize

// ErrClosed is returned by a Writer's streams after Close.
var ErrClosed = errors.New("container log writer closed")

const (
	fileMode = 0o640
	dirMode  = 0o750
)

// Writer writes a container's stdout and stderr to a log file in the CRI format, rotating it
// when it grows beyond its MaxSize. Its streams are safe for concurrent use: one lock orders
// their entries, and an entry is never split or interleaved with another.
type Writer struct {
	path  string
	opts  Options
	clock Clock

	mu     sync.Mutex
	file   *os.File // nil after a failed reopen; the next write tries again
	size   int64    // of file, as far as this Writer wrote it
	closed bool
	stdout stream
	stderr stream
	// stamp is the current Write's timestamp, batch the entries it has not written yet: one
	// write(2) per Write, not per line.
	stamp []byte
	batch []byte
}

// stream is one of a Writer's two inputs; it holds a line until its end arrives.
type stream struct {
	w    *Writer
	name string
	// pending is the start of a line whose end has not been written yet.
	pending []byte
}

// New opens the log at path for appending, creating it (mode 0640, its directory 0750)
// if needed.
func New(path string, opts Options) (*Writer, error) {
	if opts.MaxSize < 0 {
		return nil, fmt.Errorf("container log %s: MaxSize %d is negative", path, opts.MaxSize)
	}
	if opts.MaxSize > 0 && opts.MaxFiles < 2 {
		return nil, fmt.Errorf("container log %s: MaxFiles %d: rotation keeps at least 2 files", path, opts.MaxFiles)
	}
	w := &Writer{path: path, opts: opts, clock: opts.Clock}
	if w.clock == nil {
		w.clock = realClock{}
	}
	w.stdout = stream{w: w, name: crilog.StreamStdout}
	w.stderr = stream{w: w, name: crilog.StreamStderr}
	if err := os.MkdirAll(filepath.Dir(path), dirMode); err != nil {
		return nil, fmt.Errorf("container log: %w", err)
	}
	if err := w.open(); err != nil {
		return nil, err
	}
	return w, nil
}

// Stdout is the writer for the container's standard output.
func (w *Writer) Stdout() io.Writer { return &w.stdout }

// Stderr is the writer for the container's standard error.
func (w *Writer) Stderr() io.Writer { return &w.stderr }

// Write splits p into lines: each complete one is an "F" entry (a longer line than MaxLineSize
// is first cut into "P" entries), and the start of an incomplete one is held until its end
// arrives, it grows beyond MaxLineSize, or the Writer is closed. A line's trailing "\r" is
// dropped with its "\n", as containerd does.
//
// An error writing the file loses this Write's entries (the file is truncated back to its last
// complete entry) and is returned; the Writer stays usable and the next Write tries again. A
// supervisor that must keep draining the container's pipes should log the error and go on.
func (s *stream) Write(p []byte) (int, error) {
	w := s.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return 0, ErrClosed
	}
	w.stamp = w.clock.Now().UTC().AppendFormat(w.stamp[:0], crilog.TimeFormatWrite)
	var errs []error
	for rest := p; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			s.pending = append(s.pending, rest...)
			errs = s.emitOverlong(errs)
			break
		}
		line := rest[:i]
		rest = rest[i+1:]
		if len(s.pending) > 0 {
			s.pending = append(s.pending, line...)
			line = s.pending
		}
		line = bytes.TrimSuffix(line, []byte{'\r'})
		for len(line) > crilog.MaxLineSize {
			errs = w.add(errs, s.name, true, line[:crilog.MaxLineSize])
			line = line[crilog.MaxLineSize:]
		}
		errs = w.add(errs, s.name, false, line)
		s.pending = s.pending[:0]
	}
	errs = w.flush(errs)
	return len(p), errors.Join(errs...)
}

// emitOverlong writes what is pending beyond MaxLineSize as "P" entries, keeping the rest.
func (s *stream) emitOverlong(errs []error) []error {
	n := 0
	for len(s.pending)-n > crilog.MaxLineSize {
		errs = s.w.add(errs, s.name, true, s.pending[n:n+crilog.MaxLineSize])
		n += crilog.MaxLineSize
	}
	// The batch holds a copy of what was cut off: move the rest down.
	s.pending = s.pending[:copy(s.pending, s.pending[n:])]
	return errs
}

// add appends an entry to the batch, rotating the file first if the entry would take it beyond
// MaxSize. An entry larger than MaxSize on its own goes whole into a fresh file.
func (w *Writer) add(errs []error, streamName string, partial bool, content []byte) []error {
	if w.opts.MaxSize > 0 {
		pending := w.size + int64(len(w.batch))
		if pending > 0 && pending+crilog.EntrySize(w.stamp, streamName, content) > w.opts.MaxSize {
			errs = w.flush(errs)
			if err := w.rotate(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	w.batch = crilog.AppendEntry(w.batch, w.stamp, streamName, partial, content)
	return errs
}

// flush writes the batch. On a failed or short write it truncates the file back to where the
// batch started, so that the file holds only complete entries.
func (w *Writer) flush(errs []error) []error {
	if len(w.batch) == 0 {
		return errs
	}
	defer func() { w.batch = w.batch[:0] }()
	if w.file == nil {
		if err := w.open(); err != nil {
			return append(errs, err)
		}
	}
	n, err := w.file.Write(w.batch)
	if err == nil {
		w.size += int64(n)
		return errs
	}
	err = fmt.Errorf("container log %s: %w", w.path, err)
	if n > 0 {
		if terr := w.file.Truncate(w.size); terr != nil {
			err = errors.Join(err, fmt.Errorf("container log %s: dropping a partial entry: %w", w.path, terr))
		}
	}
	return append(errs, err)
}

// rotate renames the current file away, opens a new one, and removes the oldest rotated files
// beyond MaxFiles-1.
func (w *Writer) rotate() error {
	rotated, err := crilog.RotatedFiles(w.path)
	if err != nil {
		return err
	}
	if w.file != nil {
		if err := w.file.Close(); err != nil {
			return fmt.Errorf("container log %s: %w", w.path, err)
		}
		w.file = nil
		name := crilog.NextRotatedName(w.path, rotated, w.clock.Now())
		if err := os.Rename(w.path, name); err != nil {
			return fmt.Errorf("container log: rotating: %w", err)
		}
		rotated = append(rotated, crilog.LogFile{Name: name})
	}
	errs := []error{crilog.RemoveExcess(rotated, w.opts.MaxFiles-1)}
	errs = append(errs, w.open())
	return errors.Join(errs...)
}

// open opens the file at path for appending and learns its size.
func (w *Writer) open() error {
	f, err := os.OpenFile(w.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, fileMode)
	if err != nil {
		return fmt.Errorf("container log: %w", err)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("container log: %w", err)
	}
	w.file, w.size = f, info.Size()
	return nil
}

// Reopen closes the file and opens the one at path again, for when something else rotated the
// log (renamed the file away). Lines not yet complete stay held.
func (w *Writer) Reopen() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	var err error
	if w.file != nil {
		err = w.file.Close()
		w.file = nil
	}
	return errors.Join(err, w.open())
}

// Close writes what each stream holds of an incomplete line as a "P" entry — containerd's way
// with output that ends without a newline — and closes the file. The streams return ErrClosed
// afterwards.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	w.closed = true
	w.stamp = w.clock.Now().UTC().AppendFormat(w.stamp[:0], crilog.TimeFormatWrite)
	var errs []error
	for _, s := range []*stream{&w.stdout, &w.stderr} {
		if len(s.pending) > 0 {
			errs = w.add(errs, s.name, true, s.pending)
			s.pending = nil
		}
	}
	errs = w.flush(errs)
	if w.file != nil {
		if err := w.file.Close(); err != nil {
			errs = append(errs, fmt.Errorf("container log %s: %w", w.path, err))
		}
		w.file = nil
	}
	return errors.Join(errs...)
}
