package logwriter

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/vk-static/vk-static/internal/crilog"
)

var t0 = time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.UTC)

const stamp0 = "2024-05-06T07:08:09.123456789Z"

// fileEntries parses every entry of the file at path, failing on anything that is not a
// complete, well-formed entry.
func fileEntries(t *testing.T, path string) []crilog.Entry {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	if len(data) == 0 {
		return nil
	}
	require.True(t, bytes.HasSuffix(data, []byte{'\n'}), "%s ends with an incomplete entry", path)
	var entries []crilog.Entry
	for line := range bytes.SplitAfterSeq(data, []byte{'\n'}) {
		if len(line) == 0 {
			continue
		}
		var e crilog.Entry
		require.NoError(t, crilog.ParseEntry(line, &e), "entry %q of %s", line, path)
		entries = append(entries, e)
	}
	return entries
}

// streamText rebuilds what a stream wrote from entries: "P" contents joined, a newline after
// each "F".
func streamText(entries []crilog.Entry, stream string) string {
	var b strings.Builder
	for _, e := range entries {
		if string(e.Stream) != stream {
			continue
		}
		b.Write(e.Content)
		if !e.Partial {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func newTestWriter(t *testing.T, opts Options) (*Writer, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pod", "container", "0.log")
	w, err := New(path, opts)
	require.NoError(t, err)
	return w, path
}

func TestWriterLines(t *testing.T) {
	long := strings.Repeat("x", crilog.MaxLineSize)
	for _, tc := range []struct {
		name   string
		writes []string // to stdout, one Write each
		close  bool
		want   string
	}{
		{name: "lines", writes: []string{"a\nb\n"}, want: "stdout F a\nstdout F b\n"},
		{name: "empty line", writes: []string{"\n"}, want: "stdout F \n"},
		{name: "line in pieces", writes: []string{"ab", "c", "d\ne"}, want: "stdout F abcd\n"},
		{name: "incomplete line held until close, then partial", writes: []string{"a\nb"}, close: true,
			want: "stdout F a\nstdout P b\n"},
		{name: "CRLF ends a line", writes: []string{"a\r\nb\r", "\n"}, want: "stdout F a\nstdout F b\n"},
		{name: "lone CR is content", writes: []string{"a\rb\n"}, want: "stdout F a\rb\n"},
		{name: "exactly the maximum is one entry", writes: []string{long + "\n"}, want: "stdout F " + long + "\n"},
		{name: "one byte more is cut", writes: []string{long + "y\n"}, want: "stdout P " + long + "\nstdout F y\n"},
		{name: "twice the maximum", writes: []string{long + long + "\n"}, want: "stdout P " + long + "\nstdout F " + long + "\n"},
		{name: "long incomplete line cut as it grows", writes: []string{long, "yz"},
			want: "stdout P " + long + "\n"},
		{name: "long incomplete line then its end", writes: []string{long, "yz", "\n"},
			want: "stdout P " + long + "\nstdout F yz\n"},
		{name: "long line in small pieces", writes: []string{long[:100], long[100:], "y\n"},
			want: "stdout P " + long + "\nstdout F y\n"},
		{name: "nothing held, nothing written on close", writes: []string{"a\n"}, close: true, want: "stdout F a\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, path := newTestWriter(t, Options{Clock: testingclock.NewFakePassiveClock(t0)})
			for _, s := range tc.writes {
				n, err := w.Stdout().Write([]byte(s))
				require.NoError(t, err)
				require.Equal(t, len(s), n)
			}
			if tc.close {
				require.NoError(t, w.Close())
			}
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			want := ""
			for line := range strings.SplitAfterSeq(tc.want, "\n") {
				if line != "" {
					want += stamp0 + " " + line
				}
			}
			assert.Equal(t, want, string(data))
			if !tc.close {
				require.NoError(t, w.Close())
			}
		})
	}
}

func TestWriterStampsWhenLineCompletes(t *testing.T) {
	clk := testingclock.NewFakePassiveClock(t0)
	w, path := newTestWriter(t, Options{Clock: clk})
	_, err := w.Stderr().Write([]byte("start "))
	require.NoError(t, err)
	clk.SetTime(t0.Add(time.Second))
	_, err = w.Stderr().Write([]byte("end\n"))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "2024-05-06T07:08:10.123456789Z stderr F start end\n", string(data))
}

func TestWriterClose(t *testing.T) {
	w, path := newTestWriter(t, Options{Clock: testingclock.NewFakePassiveClock(t0)})
	_, err := w.Stdout().Write([]byte("out"))
	require.NoError(t, err)
	_, err = w.Stderr().Write([]byte("err"))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, stamp0+" stdout P out\n"+stamp0+" stderr P err\n", string(data))

	_, err = w.Stdout().Write([]byte("late\n"))
	assert.ErrorIs(t, err, ErrClosed)
	assert.ErrorIs(t, w.Close(), ErrClosed)
	assert.ErrorIs(t, w.Reopen(), ErrClosed)
}

func TestNewWriter(t *testing.T) {
	w, path := newTestWriter(t, Options{})
	require.NoError(t, w.Close())
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), info.Mode().Perm())
	info, err = os.Stat(filepath.Dir(path))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o750), info.Mode().Perm())

	// Appends to what is there.
	w, err = New(path, Options{Clock: testingclock.NewFakePassiveClock(t0)})
	require.NoError(t, err)
	_, err = w.Stdout().Write([]byte("a\n"))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	w, err = New(path, Options{Clock: testingclock.NewFakePassiveClock(t0)})
	require.NoError(t, err)
	_, err = w.Stdout().Write([]byte("b\n"))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	assert.Equal(t, "a\nb\n", streamText(fileEntries(t, path), crilog.StreamStdout))

	for _, opts := range []Options{{MaxSize: -1}, {MaxSize: 100}, {MaxSize: 100, MaxFiles: 1}} {
		_, err := New(path, opts)
		assert.Error(t, err, "%+v", opts)
	}
}

func TestWriterConcurrentStreams(t *testing.T) {
	w, path := newTestWriter(t, Options{MaxSize: 64 << 10, MaxFiles: 1000})
	var want [2]strings.Builder
	var wg sync.WaitGroup
	for i, s := range []io.Writer{w.Stdout(), w.Stderr()} {
		// What each stream writes, in pieces that cut lines anywhere.
		for j := range 2000 {
			fmt.Fprintf(&want[i], "stream %d line %d %s\n", i, j, strings.Repeat("z", j%300))
		}
		// Two lines cut into "P" entries.
		want[i].WriteString(strings.Repeat("long", crilog.MaxLineSize) + "\n")
		want[i].WriteString(strings.Repeat("long", crilog.MaxLineSize/2) + "\n")
		text := want[i].String()
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(i), 1))
			for rest := text; rest != ""; {
				n := min(len(rest), 1+rng.IntN(500))
				_, err := s.Write([]byte(rest[:n]))
				assert.NoError(t, err)
				rest = rest[n:]
			}
		})
	}
	wg.Wait()
	require.NoError(t, w.Close())

	files, err := crilog.Files(path)
	require.NoError(t, err)
	require.Greater(t, len(files), 2, "rotated")
	var entries []crilog.Entry
	for _, f := range files {
		entries = append(entries, fileEntries(t, f)...)
	}
	assert.Equal(t, want[0].String(), streamText(entries, crilog.StreamStdout))
	assert.Equal(t, want[1].String(), streamText(entries, crilog.StreamStderr))
}

func TestWriterRotation(t *testing.T) {
	const maxSize, maxFiles = 300, 3
	clk := testingclock.NewFakePassiveClock(t0)
	w, path := newTestWriter(t, Options{MaxSize: maxSize, MaxFiles: maxFiles, Clock: clk})
	var lines []string
	for i := range 100 {
		if i%7 == 0 {
			clk.SetTime(clk.Now().Add(time.Second)) // some rotations within a second, some not
		}
		line := fmt.Sprintf("line %d %s", i, strings.Repeat("-", i%40))
		lines = append(lines, line)
		_, err := w.Stdout().Write([]byte(line + "\n"))
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())

	files, err := crilog.Files(path)
	require.NoError(t, err)
	require.Len(t, files, maxFiles)
	assert.Equal(t, path, files[len(files)-1])
	var got []string
	for _, f := range files {
		info, err := os.Stat(f)
		require.NoError(t, err)
		assert.LessOrEqual(t, info.Size(), int64(maxSize), f)
		assert.Equal(t, os.FileMode(0o640), info.Mode().Perm())
		for _, e := range fileEntries(t, f) { // complete entries only: none split across files
			got = append(got, string(e.Content))
		}
	}
	// What is kept is the end of what was written, in order.
	require.NotEmpty(t, got)
	assert.Equal(t, lines[len(lines)-len(got):], got)
	assert.Greater(t, len(got), maxSize*(maxFiles-1)/100, "the rotated files are full")
}

func TestWriterEntryLargerThanMaxSize(t *testing.T) {
	w, path := newTestWriter(t, Options{MaxSize: 100, MaxFiles: 5, Clock: testingclock.NewFakePassiveClock(t0)})
	big := strings.Repeat("b", 200)
	for _, s := range []string{"small\n", big + "\n", "after\n"} {
		_, err := w.Stdout().Write([]byte(s))
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
	files, err := crilog.Files(path)
	require.NoError(t, err)
	require.Len(t, files, 3)
	for i, want := range []string{"small\n", big + "\n", "after\n"} {
		assert.Equal(t, want, streamText(fileEntries(t, files[i]), crilog.StreamStdout))
	}
}

func TestWriterReopen(t *testing.T) {
	w, path := newTestWriter(t, Options{Clock: testingclock.NewFakePassiveClock(t0)})
	_, err := w.Stdout().Write([]byte("before\nheld "))
	require.NoError(t, err)
	require.NoError(t, os.Rename(path, path+".old"))
	require.NoError(t, w.Reopen())
	_, err = w.Stdout().Write([]byte("line\n"))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	assert.Equal(t, "before\n", streamText(fileEntries(t, path+".old"), crilog.StreamStdout))
	assert.Equal(t, "held line\n", streamText(fileEntries(t, path), crilog.StreamStdout))
}

// BenchmarkWriter is the cost of one line through a Writer: what every container's output
// pays.
func BenchmarkWriter(b *testing.B) {
	for _, bc := range []struct {
		name     string
		lines    int // per Write
		rotating bool
	}{
		{name: "line per write", lines: 1},
		{name: "16 lines per write", lines: 16},
		{name: "rotating", lines: 1, rotating: true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			opts := Options{}
			if bc.rotating {
				opts = Options{MaxSize: 1 << 20, MaxFiles: 2}
			}
			w, err := New(filepath.Join(b.TempDir(), "0.log"), opts)
			require.NoError(b, err)
			defer w.Close()
			chunk := bytes.Repeat([]byte(strings.Repeat("a typical log line of a hundred bytes or so, ", 2)+"\n"), bc.lines)
			out := w.Stdout()
			b.SetBytes(int64(len(chunk)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := out.Write(chunk); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*bc.lines), "ns/line")
		})
	}
}

func TestWriterWriteError(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full to fail writes: %v", err)
	}
	w, path := newTestWriter(t, Options{Clock: testingclock.NewFakePassiveClock(t0)})
	writeLines(t, w.Stdout(), "before")

	// The disk fills up.
	w.mu.Lock()
	w.file.Close()
	w.file = full
	w.mu.Unlock()
	n, err := w.Stdout().Write([]byte("lost\nheld "))
	assert.ErrorIs(t, err, syscall.ENOSPC)
	assert.Equal(t, len("lost\nheld "), n, "the input is taken all the same")

	// The Writer stays usable once the file can be written again; the lost line is lost, the
	// held start of a line is not.
	require.NoError(t, w.Reopen())
	writeLines(t, w.Stdout(), "after")
	require.NoError(t, w.Close())
	assert.Equal(t, "before\nheld after\n", streamText(fileEntries(t, path), crilog.StreamStdout))
}

func writeLines(t *testing.T, w io.Writer, lines ...string) {
	t.Helper()
	for _, l := range lines {
		_, err := w.Write([]byte(l + "\n"))
		require.NoError(t, err)
	}
}
