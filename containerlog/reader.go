package containerlog

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/vk-static/vk-static/internal/crilog"
	"github.com/vk-static/vk-static/provider"
)

const (
	// readBufferSize holds any entry this package writes (MaxLineSize and a header); longer ones
	// from elsewhere are still read, in pieces.
	readBufferSize = 64 * 1024
	// outBufferSize gathers entries into fewer, larger writes to out; it is flushed whenever
	// the reader waits for more.
	outBufferSize = 32 * 1024
	// ctxCheckEvery is how many entries are read between two looks at ctx.
	ctxCheckEvery = 1024
)

// errLimitReached ends a read at opts.LimitBytes, or after opts.Tail lines without Follow.
var errLimitReached = errors.New("limit reached")

// Read writes the log at path, rotated files first, to out, shaped by opts as the kubelet
// shapes a log (see the package documentation). Without opts.Follow it returns nil at the end
// of the log. With it, it waits for new entries and follows rotations until done is closed —
// it then reads what was written until then and returns nil — or ctx ends (ctx's error). done
// may be nil. A log without any file is an error wrapping fs.ErrNotExist.
func Read(ctx context.Context, path string, opts provider.ContainerLogOpts, out io.Writer, done <-chan struct{}) error {
	return read(ctx, path, opts, out, done, clock.RealClock{})
}

func read(ctx context.Context, path string, opts provider.ContainerLogOpts, out io.Writer, done <-chan struct{}, clk clock.PassiveClock) error {
	r, err := openReader(ctx, path, opts, clk)
	if err != nil {
		return err
	}
	return r.run(ctx, out, done)
}

// Open is Read as a stream, for a provider's GetContainerLogs: it returns at once, with the
// errors that come before any output (a missing log wraps fs.ErrNotExist), and reads the log
// in a goroutine that ends when the stream is closed or ctx ends. The stream ends with io.EOF
// where Read returns nil, and with ctx's error when ctx ends. Close waits for the goroutine.
func Open(ctx context.Context, path string, opts provider.ContainerLogOpts, done <-chan struct{}) (io.ReadCloser, error) {
	r, err := openReader(ctx, path, opts, clock.RealClock{})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	pr, pw := io.Pipe()
	// A write to the pipe blocks until the stream is read: ending ctx must end it too.
	stopClosing := context.AfterFunc(ctx, func() { pw.CloseWithError(ctx.Err()) })
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		defer cancel()
		err := r.run(ctx, pw, done)
		stopClosing()
		pw.CloseWithError(err)
	}()
	return &logStream{PipeReader: pr, cancel: cancel, finished: finished}, nil
}

// logStream is what Open returns.
type logStream struct {
	*io.PipeReader
	cancel   context.CancelFunc
	finished <-chan struct{}
}

// Close ends the reading goroutine and waits for it, so that the log's files are closed when
// it returns.
func (s *logStream) Close() error {
	s.cancel()
	err := s.PipeReader.Close()
	<-s.finished
	return err
}

// openedFile is a file of the log, open for reading.
type openedFile struct {
	name string
	file *os.File
	info os.FileInfo
}

// reader reads one log from a position on, entry by entry, into a lineWriter.
type reader struct {
	path   string
	base   string
	opts   provider.ContainerLogOpts
	since  time.Time
	logger klog.Logger
	// watcher watches the log's directory when following; nil otherwise.
	watcher *fsnotify.Watcher

	cur openedFile
	in  *bufio.Reader
	// fragment is what was read of cur after its last complete entry: the start of an entry
	// being written, or of one longer than in's buffer.
	fragment []byte
	// spare are files opened with the first listing and not reached yet: held open so that
	// removing the oldest rotated files does not take them away while earlier ones are read.
	spare []openedFile

	// atLineStart: the next entry starts a line; skipLine: the line being read is older than
	// since.
	atLineStart bool
	skipLine    bool
	// tailLeft counts down the lines Tail lets through without Follow (-1: no such limit). At
	// zero the next line ends the read, as the kubelet stops after that many: lines written
	// while the tail is read are not shown. An entry cut short at the end of the log is still
	// shown after them (endFile), as it was before the limit.
	tailLeft   int
	endingFile bool
}

// openReader opens the log's files and finds where to start reading; everything that can fail
// before the first line does so here.
func openReader(ctx context.Context, path string, opts provider.ContainerLogOpts, clk clock.PassiveClock) (*reader, error) {
	// The kubelet resolves symlinks too, so that the directory watched is the one written.
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		path = resolved
	}
	r := &reader{
		path:        path,
		base:        filepath.Base(path),
		opts:        opts,
		since:       since(opts, clk.Now()),
		logger:      klog.FromContext(ctx).WithValues("path", path),
		atLineStart: true,
	}
	r.tailLeft = -1
	if !opts.Follow && opts.Tail > 0 {
		r.tailLeft = opts.Tail
	}
	if opts.Follow {
		// Watching before listing: nothing written after the listing can go unnoticed.
		w, err := fsnotify.NewWatcher()
		if err != nil {
			return nil, fmt.Errorf("container log %s: watching: %w", path, err)
		}
		if err := w.Add(filepath.Dir(path)); err != nil {
			w.Close()
			return nil, fmt.Errorf("container log %s: watching: %w", path, err)
		}
		r.watcher = w
	}
	files, err := openFiles(path)
	if err == nil && len(files) == 0 {
		err = fmt.Errorf("container log %s: %w", path, fs.ErrNotExist)
	}
	start, offset := 0, int64(0)
	if err == nil && opts.Tail > 0 {
		start, offset, err = tailStart(files, opts.Tail, r.since)
	}
	if err != nil {
		closeFiles(files)
		r.close()
		return nil, err
	}
	closeFiles(files[:start])
	r.spare = files[start+1:]
	if err := r.setCurrent(files[start], offset); err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

// since is the oldest time a line may have: the later of opts' two bounds, as the kubelet
// computes it.
func since(opts provider.ContainerLogOpts, now time.Time) time.Time {
	var t time.Time
	if opts.SinceSeconds > 0 {
		t = now.Add(-time.Duration(opts.SinceSeconds) * time.Second)
	}
	if opts.SinceTime.After(t) {
		t = opts.SinceTime
	}
	return t
}

// openFiles opens the log's files, oldest first.
func openFiles(path string) ([]openedFile, error) {
	listed, err := crilog.ListFiles(path)
	if err != nil {
		return nil, err
	}
	var files []openedFile
	for _, l := range listed {
		f, err := openListed(l)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errReplaced) {
			// Removed or rotated since the listing: the next listing places it.
			continue
		}
		if err != nil {
			closeFiles(files)
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

// errReplaced: a listed name names another file by the time it is opened.
var errReplaced = errors.New("replaced since listed")

// openListed opens a listed file, making sure it is the file listed.
func openListed(l crilog.LogFile) (openedFile, error) {
	f, err := os.Open(l.Name)
	if err != nil {
		return openedFile{}, fmt.Errorf("container log: %w", err)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return openedFile{}, fmt.Errorf("container log: %w", err)
	}
	if !os.SameFile(info, l.Info) {
		f.Close()
		return openedFile{}, fmt.Errorf("container log %s: %w", l.Name, errReplaced)
	}
	return openedFile{name: l.Name, file: f, info: info}, nil
}

func closeFiles(files []openedFile) {
	for _, f := range files {
		f.file.Close()
	}
}

// setCurrent makes f the file being read, from offset on.
func (r *reader) setCurrent(f openedFile, offset int64) error {
	if r.cur.file != nil {
		r.cur.file.Close()
	}
	r.cur = f
	r.fragment = r.fragment[:0]
	if _, err := f.file.Seek(offset, io.SeekStart); err != nil {
		return fmt.Errorf("container log %s: %w", f.name, err)
	}
	if r.in == nil {
		r.in = bufio.NewReaderSize(f.file, readBufferSize)
	} else {
		r.in.Reset(f.file)
	}
	return nil
}

func (r *reader) close() {
	if r.cur.file != nil {
		r.cur.file.Close()
		r.cur.file = nil
	}
	closeFiles(r.spare)
	r.spare = nil
	if r.watcher != nil {
		r.watcher.Close()
	}
}

// run reads from the current position to the end of the log, and on when following.
func (r *reader) run(ctx context.Context, out io.Writer, done <-chan struct{}) error {
	defer r.close()
	buffered := bufio.NewWriterSize(out, outBufferSize)
	lw := newLineWriter(buffered, r.opts)
	draining := !r.opts.Follow
	for {
		err := r.readEntries(ctx, lw)
		if err == nil {
			err = r.next(ctx, lw, &draining, done)
		}
		switch {
		case errors.Is(err, errLimitReached), errors.Is(err, errEnd):
			return buffered.Flush()
		case err != nil:
			return err
		}
	}
}

// errEnd: the whole log has been read.
var errEnd = errors.New("end of log")

// next is what run does at the end of the current file: move to the file that follows it, end
// (errEnd), or wait for the log to change.
func (r *reader) next(ctx context.Context, lw *lineWriter, draining *bool, done <-chan struct{}) error {
	successor, err := r.successor()
	if err != nil {
		return err
	}
	if successor != nil {
		// cur was rotated away, so it is complete: read what was added since the last read
		// before moving on.
		if err := r.readEntries(ctx, lw); err != nil {
			successor.file.Close()
			return err
		}
		if err := r.endFile(lw); err != nil {
			successor.file.Close()
			return err
		}
		return r.setCurrent(*successor, 0)
	}
	if *draining {
		if err := r.endFile(lw); err != nil {
			return err
		}
		return errEnd
	}
	if err := lw.out.Flush(); err != nil {
		return err
	}
	err = r.wait(ctx, done)
	if errors.Is(err, errDone) {
		// Everything written up to now is to be read: one more pass, then the end.
		*draining = true
		return nil
	}
	return err
}

// readEntries writes the complete entries of the current file from the current position on.
func (r *reader) readEntries(ctx context.Context, lw *lineWriter) error {
	for n := 1; ; n++ {
		if n%ctxCheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		line, err := r.in.ReadSlice('\n')
		switch {
		case err == nil:
			if len(r.fragment) > 0 {
				r.fragment = append(r.fragment, line...)
				line = r.fragment
			}
			err := r.write(lw, line)
			r.fragment = r.fragment[:0]
			if err != nil {
				return err
			}
		case errors.Is(err, bufio.ErrBufferFull), errors.Is(err, io.EOF):
			r.fragment = append(r.fragment, line...)
			if err == io.EOF {
				return nil
			}
		default:
			return fmt.Errorf("container log %s: %w", r.cur.name, err)
		}
	}
}

// endFile writes what is left of a file that will not grow any more and does not end with a
// newline, as the kubelet does: the end of an entry cut short.
func (r *reader) endFile(lw *lineWriter) error {
	if len(r.fragment) == 0 {
		return nil
	}
	r.logger.V(4).Info("Incomplete entry at the end of a container log file", "file", r.cur.name)
	r.endingFile = true
	err := r.write(lw, r.fragment)
	r.endingFile = false
	r.fragment = r.fragment[:0]
	return err
}

// write writes one entry, unless it is malformed or its line is older than since.
func (r *reader) write(lw *lineWriter, line []byte) error {
	var e crilog.Entry
	if err := crilog.ParseEntry(line, &e); err != nil {
		r.logger.V(4).Info("Skipping a malformed container log entry", "file", r.cur.name, "err", err)
		return nil
	}
	lineStart := r.atLineStart
	if lineStart {
		// A line is in or out as a whole, by the time of its first entry.
		r.skipLine = e.Time.Before(r.since)
	}
	r.atLineStart = !e.Partial
	if r.skipLine {
		return nil
	}
	if lineStart && r.tailLeft == 0 && !r.endingFile {
		return errLimitReached
	}
	if r.tailLeft > 0 && !e.Partial {
		r.tailLeft--
	}
	return lw.write(&e, lineStart)
}

// lineWriter writes entries as the kubelet does: the content of each, a newline after an "F"
// entry's, a timestamp before each line if asked, and no more than LimitBytes in all.
type lineWriter struct {
	out        *bufio.Writer
	timestamps bool
	remain     int64
	buf        []byte
}

func newLineWriter(out *bufio.Writer, opts provider.ContainerLogOpts) *lineWriter {
	w := &lineWriter{out: out, timestamps: opts.Timestamps, remain: math.MaxInt64}
	if opts.LimitBytes > 0 {
		w.remain = opts.LimitBytes
	}
	return w
}

func (w *lineWriter) write(e *crilog.Entry, lineStart bool) error {
	w.buf = w.buf[:0]
	if lineStart && w.timestamps {
		w.buf = e.Time.AppendFormat(w.buf, crilog.TimeFormatOut)
		w.buf = append(w.buf, ' ')
	}
	w.buf = append(w.buf, e.Content...)
	if !e.Partial {
		w.buf = append(w.buf, '\n')
	}
	b := w.buf
	if int64(len(b)) > w.remain {
		b = b[:w.remain]
	}
	n, err := w.out.Write(b)
	w.remain -= int64(n)
	if err != nil {
		return err
	}
	if w.remain <= 0 {
		return errLimitReached
	}
	return nil
}
