package containerlog

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/vk-static/vk-static/containerlog/logwriter"
	"github.com/vk-static/vk-static/internal/crilog"
	"github.com/vk-static/vk-static/provider"
	"github.com/vk-static/vk-static/test/support/syncbuf"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const eventually = 10 * time.Second

// collector reads a stream to its end in the background.
type collector struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	err  error
	done chan struct{}
}

func collect(r io.Reader) *collector {
	c := &collector{done: make(chan struct{})}
	go func() {
		defer close(c.done)
		buf := make([]byte, 4096)
		for {
			n, err := r.Read(buf)
			c.mu.Lock()
			c.buf.Write(buf[:n])
			if err != nil {
				c.err = err
			}
			c.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return c
}

func (c *collector) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

// wait waits for the stream's end and returns how it ended.
func (c *collector) wait(t *testing.T) error {
	t.Helper()
	select {
	case <-c.done:
	case <-time.After(eventually):
		t.Fatal("the stream did not end")
	}
	return c.err
}

func (c *collector) requireEventually(t *testing.T, want string) {
	t.Helper()
	if !assert.Eventually(t, func() bool { return c.String() == want }, eventually, time.Millisecond) {
		got := c.String()
		gotLines := map[string]bool{}
		for _, l := range strings.Split(got, "\n") {
			gotLines[l] = true
		}
		var missing []string
		for _, l := range strings.Split(want, "\n") {
			if !gotLines[l] {
				missing = append(missing, l[:min(len(l), 9)])
			}
		}
		t.Logf("missing %q", missing)
		t.Fatalf("got %d bytes, want %d; got ends %q, want ends %q", len(got), len(want), got[max(0, len(got)-200):], want[max(0, len(want)-200):])
	}
}

func writeLines(t *testing.T, w io.Writer, lines ...string) {
	t.Helper()
	for _, l := range lines {
		_, err := w.Write([]byte(l + "\n"))
		require.NoError(t, err)
	}
}

func TestFollowNewLines(t *testing.T) {
	w, path := newTestWriter(t, logwriter.Options{})
	writeLines(t, w.Stdout(), "before1", "before2")
	done := make(chan struct{})
	rc, err := Open(context.Background(), path, provider.ContainerLogOpts{Follow: true, Tail: 1}, done)
	require.NoError(t, err)
	c := collect(rc)
	c.requireEventually(t, "before2\n")

	writeLines(t, w.Stderr(), "after1")
	c.requireEventually(t, "before2\nafter1\n")

	// A line written in pieces appears when it is complete.
	_, err = w.Stdout().Write([]byte("in "))
	require.NoError(t, err)
	_, err = w.Stdout().Write([]byte("pieces\n"))
	require.NoError(t, err)
	c.requireEventually(t, "before2\nafter1\nin pieces\n")

	// The container ends: what it wrote last is read, then the stream ends.
	_, err = w.Stdout().Write([]byte("last\nno newline"))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	close(done)
	assert.ErrorIs(t, c.wait(t), io.EOF)
	assert.Equal(t, "before2\nafter1\nin pieces\nlast\nno newline", c.String())
	require.NoError(t, rc.Close())
}

func TestFollowRotation(t *testing.T) {
	for _, tc := range []struct {
		name     string
		maxFiles int
		slow     bool // the reader reads while lines are written, not only at the end
	}{
		{name: "keeping everything", maxFiles: 1000, slow: true},
		{name: "reader behind the writer", maxFiles: 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, path := newTestWriter(t, logwriter.Options{MaxSize: 1024, MaxFiles: tc.maxFiles})
			writeLines(t, w.Stdout(), "first")
			done := make(chan struct{})
			rc, err := Open(context.Background(), path, provider.ContainerLogOpts{Follow: true}, done)
			require.NoError(t, err)
			c := collect(rc)

			var want strings.Builder
			want.WriteString("first\n")
			for i := range 500 {
				line := fmt.Sprintf("line %d %s", i, strings.Repeat("+", i%50))
				want.WriteString(line + "\n")
				writeLines(t, w.Stdout(), line)
				if tc.slow && i%50 == 0 {
					c.requireEventually(t, want.String())
				}
			}
			c.requireEventually(t, want.String())
			files, err := crilog.Files(path)
			require.NoError(t, err)
			assert.Greater(t, len(files), 10, "rotated while followed")

			require.NoError(t, w.Close())
			close(done)
			assert.ErrorIs(t, c.wait(t), io.EOF)
			assert.Equal(t, want.String(), c.String(), "each line once, in order")
			require.NoError(t, rc.Close())
		})
	}
}

// TestFollowRotationConcurrent writes and rotates while the reader reads, with old files
// removed: every line the reader shows is in order and shown once, and every line still
// retained when it catches up is shown.
func TestFollowRotationConcurrent(t *testing.T) {
	w, path := newTestWriter(t, logwriter.Options{MaxSize: 2048, MaxFiles: 3})
	writeLines(t, w.Stdout(), "line -1")
	done := make(chan struct{})
	rc, err := Open(context.Background(), path, provider.ContainerLogOpts{Follow: true}, done)
	require.NoError(t, err)
	c := collect(rc)
	const n = 3000
	for i := range n {
		writeLines(t, w.Stdout(), fmt.Sprintf("line %d", i))
	}
	require.NoError(t, w.Close())
	close(done)
	assert.ErrorIs(t, c.wait(t), io.EOF)
	require.NoError(t, rc.Close())

	got := strings.Split(strings.TrimSuffix(c.String(), "\n"), "\n")
	prev := -2
	for _, line := range got {
		var i int
		_, err := fmt.Sscanf(line, "line %d", &i)
		require.NoError(t, err, "line %q", line)
		require.Greater(t, i, prev, "in order, no repeats")
		prev = i
	}
	assert.Equal(t, n-1, prev, "the last line is read")
}

func TestFollowDoneDrains(t *testing.T) {
	w, path := newTestWriter(t, logwriter.Options{MaxSize: 512, MaxFiles: 100})
	done := make(chan struct{})
	var out bytes.Buffer
	var want strings.Builder
	for i := range 100 {
		line := fmt.Sprintf("line %d", i)
		want.WriteString(line + "\n")
		writeLines(t, w.Stdout(), line)
	}
	require.NoError(t, w.Close())
	close(done)
	// Done before Read starts: it reads everything, across the rotations, and returns.
	require.NoError(t, Read(context.Background(), path, provider.ContainerLogOpts{Follow: true}, &out, done))
	assert.Equal(t, want.String(), out.String())
}

func TestFollowDoneWhileWaiting(t *testing.T) {
	w, path := newTestWriter(t, logwriter.Options{})
	writeLines(t, w.Stdout(), "a")
	done := make(chan struct{})
	out := &syncbuf.Buffer{}
	result := make(chan error, 1)
	go func() { result <- Read(context.Background(), path, provider.ContainerLogOpts{Follow: true}, out, done) }()
	require.Eventually(t, func() bool { return out.String() == "a\n" }, eventually, time.Millisecond)

	// Written and closed just before done: read before Read returns.
	writeLines(t, w.Stdout(), "b")
	require.NoError(t, w.Close())
	close(done)
	select {
	case err := <-result:
		require.NoError(t, err)
	case <-time.After(eventually):
		t.Fatal("Read did not return after done")
	}
	assert.Equal(t, "a\nb\n", out.String())
}

func TestFollowContextEnds(t *testing.T) {
	w, path := newTestWriter(t, logwriter.Options{})
	defer w.Close()
	writeLines(t, w.Stdout(), "a")

	t.Run("Read", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		out := &syncbuf.Buffer{}
		result := make(chan error, 1)
		go func() { result <- Read(ctx, path, provider.ContainerLogOpts{Follow: true}, out, nil) }()
		require.Eventually(t, func() bool { return out.String() == "a\n" }, eventually, time.Millisecond)
		cancel()
		select {
		case err := <-result:
			assert.ErrorIs(t, err, context.Canceled)
		case <-time.After(eventually):
			t.Fatal("Read did not return when ctx ended")
		}
	})

	t.Run("Open", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		rc, err := Open(ctx, path, provider.ContainerLogOpts{Follow: true}, nil)
		require.NoError(t, err)
		c := collect(rc)
		c.requireEventually(t, "a\n")
		cancel()
		assert.ErrorIs(t, c.wait(t), context.Canceled)
		require.NoError(t, rc.Close())
	})

	t.Run("Open while nobody reads", func(t *testing.T) {
		// The reading goroutine blocks writing to the pipe; ending ctx still ends it.
		big := strings.Repeat("x", 1000)
		for range 200 {
			writeLines(t, w.Stdout(), big)
		}
		ctx, cancel := context.WithCancel(context.Background())
		rc, err := Open(ctx, path, provider.ContainerLogOpts{Follow: true}, nil)
		require.NoError(t, err)
		cancel()
		_, err = io.ReadAll(rc)
		assert.ErrorIs(t, err, context.Canceled)
		require.NoError(t, rc.Close())
	})
}

func TestOpenCloseEndsTheGoroutine(t *testing.T) {
	w, path := newTestWriter(t, logwriter.Options{})
	defer w.Close()
	writeLines(t, w.Stdout(), "a")
	for _, tc := range []struct {
		name string
		read bool
	}{
		{name: "waiting for lines", read: true},
		{name: "blocked writing to the pipe", read: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc, err := Open(context.Background(), path, provider.ContainerLogOpts{Follow: true}, nil)
			require.NoError(t, err)
			if tc.read {
				buf := make([]byte, 10)
				n, err := io.ReadAtLeast(rc, buf, 2)
				require.NoError(t, err)
				require.Equal(t, "a\n", string(buf[:n]))
			}
			require.NoError(t, rc.Close())
			goleak.VerifyNone(t)
			_, err = rc.Read(make([]byte, 1))
			assert.ErrorIs(t, err, io.ErrClosedPipe)
		})
	}
}

func TestFollowLogCreatedAfterRotation(t *testing.T) {
	// Only rotated files exist (between a rotation's rename and the new file's creation, or a
	// writer that has not reopened yet): they are read, and the new file is followed when it
	// appears.
	w, path := newTestWriter(t, logwriter.Options{})
	writeLines(t, w.Stdout(), "old")
	require.NoError(t, w.Close())
	require.NoError(t, os.Rename(path, path+".20200101-000000"))

	done := make(chan struct{})
	rc, err := Open(context.Background(), path, provider.ContainerLogOpts{Follow: true}, done)
	require.NoError(t, err)
	c := collect(rc)
	c.requireEventually(t, "old\n")

	w, err = logwriter.New(path, logwriter.Options{})
	require.NoError(t, err)
	writeLines(t, w.Stdout(), "new")
	c.requireEventually(t, "old\nnew\n")
	require.NoError(t, w.Close())
	close(done)
	assert.ErrorIs(t, c.wait(t), io.EOF)
	require.NoError(t, rc.Close())
}

func TestFollowLimitEnds(t *testing.T) {
	w, path := newTestWriter(t, logwriter.Options{})
	defer w.Close()
	writeLines(t, w.Stdout(), "abc")
	rc, err := Open(context.Background(), path, provider.ContainerLogOpts{Follow: true, LimitBytes: 6}, nil)
	require.NoError(t, err)
	c := collect(rc)
	c.requireEventually(t, "abc\n")
	writeLines(t, w.Stdout(), "defgh")
	assert.ErrorIs(t, c.wait(t), io.EOF, "the limit ends a followed stream")
	assert.Equal(t, "abc\nde", c.String())
	require.NoError(t, rc.Close())
}
