package containerlog

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/vk-static/vk-static/containerlog/logwriter"
	"github.com/vk-static/vk-static/internal/crilog"
	"github.com/vk-static/vk-static/provider"
)

// base is the time of the test logs' entries: "base+N" in a test log is N seconds after it.
var base = time.Date(2020, 9, 27, 11, 18, 0, 0, time.UTC)

func at(seconds float64) time.Time { return base.Add(time.Duration(seconds * float64(time.Second))) }

// testLog is the kubelet tests' log, with a line cut into "P" entries, a malformed entry, and
// timestamps of varying width and zone.
const testLog = "" +
	"2020-09-27T11:18:01Z stdout F line1\n" +
	"2020-09-27T11:18:02.5Z stderr F line2\n" +
	"2020-09-27T06:18:03-05:00 stdout P lo\n" +
	"2020-09-27T11:18:03.5Z stdout P:X ng\n" +
	"2020-09-27T11:18:04.000000001Z stdout F 3\n" +
	"not a CRI log entry\n" +
	"2020-09-27T11:18:05Z stdout F line5\n"

func writeLog(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600))
	}
	return filepath.Join(dir, "0.log")
}

// readAll is Read at the given time, without follow.
func readAll(t *testing.T, path string, opts provider.ContainerLogOpts, now time.Time) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := read(context.Background(), path, opts, &out, nil, testingclock.NewFakePassiveClock(now))
	return out.String(), err
}

func TestRead(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts provider.ContainerLogOpts
		now  time.Time
		want string
	}{
		{name: "whole log", want: "line1\nline2\nlong3\nline5\n"},
		{name: "tail 1", opts: provider.ContainerLogOpts{Tail: 1}, want: "line5\n"},
		{name: "tail counts a cut line once", opts: provider.ContainerLogOpts{Tail: 2}, want: "long3\nline5\n"},
		{name: "tail 3", opts: provider.ContainerLogOpts{Tail: 3}, want: "line2\nlong3\nline5\n"},
		{name: "tail beyond the log", opts: provider.ContainerLogOpts{Tail: 10}, want: "line1\nline2\nlong3\nline5\n"},
		{name: "negative tail is the whole log", opts: provider.ContainerLogOpts{Tail: -1}, want: "line1\nline2\nlong3\nline5\n"},
		{name: "limit bytes mid-line", opts: provider.ContainerLogOpts{LimitBytes: 9}, want: "line1\nlin"},
		{name: "limit bytes at a line's end", opts: provider.ContainerLogOpts{LimitBytes: 6}, want: "line1\n"},
		{name: "limit bytes mid-P", opts: provider.ContainerLogOpts{LimitBytes: 13}, want: "line1\nline2\nl"},
		{name: "limit bytes beyond the log", opts: provider.ContainerLogOpts{LimitBytes: 100}, want: "line1\nline2\nlong3\nline5\n"},
		{name: "since time includes its own second", opts: provider.ContainerLogOpts{SinceTime: at(2.5)}, want: "line2\nlong3\nline5\n"},
		{name: "since time takes a line by its first entry", opts: provider.ContainerLogOpts{SinceTime: at(3.2)}, want: "line5\n"},
		{name: "since time at a cut line's start", opts: provider.ContainerLogOpts{SinceTime: at(3)}, want: "long3\nline5\n"},
		{name: "since now is nothing", opts: provider.ContainerLogOpts{SinceTime: at(6)}, want: ""},
		{name: "since seconds", opts: provider.ContainerLogOpts{SinceSeconds: 3}, now: at(5.8), want: "long3\nline5\n"},
		{name: "since seconds includes its own second", opts: provider.ContainerLogOpts{SinceSeconds: 3}, now: at(5.5), want: "line2\nlong3\nline5\n"},
		{name: "later bound of the two: seconds", opts: provider.ContainerLogOpts{SinceSeconds: 3, SinceTime: at(1)}, now: at(5.8), want: "long3\nline5\n"},
		{name: "later bound of the two: time", opts: provider.ContainerLogOpts{SinceSeconds: 100, SinceTime: at(2)}, now: at(5.5), want: "line2\nlong3\nline5\n"},
		{name: "timestamps, a cut line's first, zones kept", opts: provider.ContainerLogOpts{Timestamps: true}, want: "" +
			"2020-09-27T11:18:01.000000000Z line1\n" +
			"2020-09-27T11:18:02.500000000Z line2\n" +
			"2020-09-27T06:18:03.000000000-05:00 long3\n" +
			"2020-09-27T11:18:05.000000000Z line5\n"},
		{name: "limit counts the timestamps", opts: provider.ContainerLogOpts{Timestamps: true, LimitBytes: 33}, want: "2020-09-27T11:18:01.000000000Z li"},
		{name: "limit cuts a timestamp", opts: provider.ContainerLogOpts{Timestamps: true, LimitBytes: 41}, want: "2020-09-27T11:18:01.000000000Z line1\n2020"},
		{name: "since then tail", opts: provider.ContainerLogOpts{SinceTime: at(3), Tail: 3}, want: "long3\nline5\n"},
		{name: "since then tail, the since bound inside a tail", opts: provider.ContainerLogOpts{SinceTime: at(2.5), Tail: 2}, want: "long3\nline5\n"},
		{name: "tail then limit", opts: provider.ContainerLogOpts{Tail: 2, LimitBytes: 8}, want: "long3\nli"},
		{name: "since, tail, limit and timestamps", opts: provider.ContainerLogOpts{SinceTime: at(2), Tail: 2, LimitBytes: 51, Timestamps: true},
			want: "2020-09-27T06:18:03.000000000-05:00 long3\n2020-09-2"},
		{name: "follow with done closed reads it all", opts: provider.ContainerLogOpts{Follow: true, Tail: 2}, want: "long3\nline5\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeLog(t, map[string]string{"0.log": testLog})
			now := tc.now
			if now.IsZero() {
				now = at(10)
			}
			var out bytes.Buffer
			done := make(chan struct{})
			close(done)
			err := read(context.Background(), path, tc.opts, &out, done, testingclock.NewFakePassiveClock(now))
			require.NoError(t, err)
			assert.Equal(t, tc.want, out.String())
		})
	}
}

func TestReadRotatedFiles(t *testing.T) {
	entries := func(from, to int) string {
		var b strings.Builder
		for i := from; i <= to; i++ {
			fmt.Fprintf(&b, "%s stdout F line%d\n", at(float64(i)).Format(time.RFC3339Nano), i)
		}
		return b.String()
	}
	path := writeLog(t, map[string]string{
		"0.log.20200927-111802":    entries(1, 2),
		"0.log.20200927-111804":    entries(3, 4) + "2020-09-27T11:18:04.5Z stdout P cut ", // a line across files
		"0.log.20200927-111804.1":  "2020-09-27T11:18:04.6Z stdout F across\n" + entries(5, 6),
		"0.log":                    entries(7, 8),
		"0.log.20200927-111804.gz": "not ours\n",
		"1.log":                    entries(100, 100),
	})
	all := "line1\nline2\nline3\nline4\ncut across\nline5\nline6\nline7\nline8\n"
	for _, tc := range []struct {
		name string
		opts provider.ContainerLogOpts
		want string
	}{
		{name: "whole history", want: all},
		{name: "tail in the current file", opts: provider.ContainerLogOpts{Tail: 2}, want: "line7\nline8\n"},
		{name: "tail across files", opts: provider.ContainerLogOpts{Tail: 4}, want: "line5\nline6\nline7\nline8\n"},
		{name: "tail at a line across files", opts: provider.ContainerLogOpts{Tail: 5}, want: "cut across\nline5\nline6\nline7\nline8\n"},
		{name: "tail at the first file's end", opts: provider.ContainerLogOpts{Tail: 7}, want: "line3\nline4\ncut across\nline5\nline6\nline7\nline8\n"},
		{name: "tail of all", opts: provider.ContainerLogOpts{Tail: 100}, want: all},
		{name: "since", opts: provider.ContainerLogOpts{SinceTime: at(6)}, want: "line6\nline7\nline8\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readAll(t, path, tc.opts, at(100))
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestReadEnds(t *testing.T) {
	for _, tc := range []struct {
		name string
		log  string
		opts provider.ContainerLogOpts
		want string
	}{
		{name: "empty log", log: "", want: ""},
		{name: "empty log, tail", log: "", opts: provider.ContainerLogOpts{Tail: 3}, want: ""},
		{name: "output ending without newline", log: "2020-09-27T11:18:01Z stdout F a\n2020-09-27T11:18:02Z stdout P b\n", want: "a\nb"},
		{name: "an unfinished line is the last line", log: "2020-09-27T11:18:01Z stdout F a\n2020-09-27T11:18:02Z stdout P b\n",
			opts: provider.ContainerLogOpts{Tail: 1}, want: "b"},
		{name: "an unfinished line is one line", log: "2020-09-27T11:18:01Z stdout F a\n2020-09-27T11:18:02Z stdout P b\n2020-09-27T11:18:02Z stdout P c\n",
			opts: provider.ContainerLogOpts{Tail: 2}, want: "a\nbc"},
		{name: "unfinished line with timestamps", log: "2020-09-27T11:18:01Z stdout P a\n2020-09-27T11:18:02Z stderr F b\n2020-09-27T11:18:03Z stdout F c\n",
			opts: provider.ContainerLogOpts{Timestamps: true}, want: "2020-09-27T11:18:01.000000000Z ab\n2020-09-27T11:18:03.000000000Z c\n"},
		{name: "an entry cut short at the end is read, as the kubelet does", log: "2020-09-27T11:18:01Z stdout F a\n2020-09-27T11:18:02Z stdout F b",
			want: "a\nb\n"},
		{name: "but not counted by tail", log: "2020-09-27T11:18:01Z stdout F a\n2020-09-27T11:18:02Z stdout F b",
			opts: provider.ContainerLogOpts{Tail: 1}, want: "a\nb\n"},
		{name: "only malformed", log: "x\ny\n", opts: provider.ContainerLogOpts{Tail: 1}, want: ""},
		{name: "malformed entries are not lines", log: "2020-09-27T11:18:01Z stdout F a\nx\ny\n", opts: provider.ContainerLogOpts{Tail: 1}, want: "a\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeLog(t, map[string]string{"0.log": tc.log})
			got, err := readAll(t, path, tc.opts, at(100))
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestReadSinceThenTail: since applies before tail, as provider.ContainerLogOpts says, which differs
// from tail-then-since (the kubelet's order) only when the log's clock went back.
func TestReadSinceThenTail(t *testing.T) {
	path := writeLog(t, map[string]string{"0.log": "" +
		"2020-09-27T11:18:05Z stdout F x\n" +
		"2020-09-27T11:18:01Z stdout P y\n" + // the clock went back
		"2020-09-27T11:18:07Z stdout F y\n" + // a line's time is its first entry's
		"2020-09-27T11:18:06Z stdout F z\n"})
	for _, tc := range []struct {
		opts provider.ContainerLogOpts
		want string
	}{
		{opts: provider.ContainerLogOpts{SinceTime: at(4), Tail: 2}, want: "x\nz\n"},
		{opts: provider.ContainerLogOpts{SinceTime: at(4), Tail: 1}, want: "z\n"},
		{opts: provider.ContainerLogOpts{SinceTime: at(4), Tail: 3}, want: "x\nz\n"},
		{opts: provider.ContainerLogOpts{SinceTime: at(5.5), Tail: 2}, want: "z\n"},
		{opts: provider.ContainerLogOpts{Tail: 2}, want: "yy\nz\n"},
	} {
		got, err := readAll(t, path, tc.opts, at(100))
		require.NoError(t, err)
		assert.Equal(t, tc.want, got, "%+v", tc.opts)
	}
}

func TestReadMissing(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		path string
		opts provider.ContainerLogOpts
	}{
		{name: "file", path: filepath.Join(dir, "0.log")},
		{name: "file, follow", path: filepath.Join(dir, "0.log"), opts: provider.ContainerLogOpts{Follow: true}},
		{name: "directory", path: filepath.Join(dir, "missing", "0.log")},
		{name: "directory, follow", path: filepath.Join(dir, "missing", "0.log"), opts: provider.ContainerLogOpts{Follow: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Read(context.Background(), tc.path, tc.opts, io.Discard, nil)
			assert.ErrorIs(t, err, fs.ErrNotExist)
			rc, err := Open(context.Background(), tc.path, tc.opts, nil)
			assert.ErrorIs(t, err, fs.ErrNotExist)
			assert.Nil(t, rc)
		})
	}
}

// TestReadTail checks tail against the lines a Writer wrote, over logs that span many read
// blocks and files, with lines cut into "P" entries among them.
func TestReadTail(t *testing.T) {
	w, path := newTestWriter(t, logwriter.Options{MaxSize: 256 << 10, MaxFiles: 100})
	var lines []string
	for i := range 6000 {
		line := fmt.Sprintf("line %d %s", i, strings.Repeat("=", i%97))
		if i%500 == 0 {
			line += strings.Repeat("long", crilog.MaxLineSize/2) // three entries
		}
		lines = append(lines, line)
		_, err := w.Stderr().Write([]byte(line + "\n"))
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
	files, err := crilog.Files(path)
	require.NoError(t, err)
	require.Greater(t, len(files), 2)

	for _, n := range []int{1, 2, 3, 100, 499, 500, 501, 1234, 5999, 6000, 6001, 100000} {
		got, err := readAll(t, path, provider.ContainerLogOpts{Tail: n}, time.Now())
		require.NoError(t, err)
		want := strings.Join(lines[max(0, len(lines)-n):], "\n") + "\n"
		require.Equal(t, want, got, "tail %d", n)
	}
}

func TestOpenWithoutFollow(t *testing.T) {
	path := writeLog(t, map[string]string{"0.log": testLog})
	rc, err := Open(context.Background(), path, provider.ContainerLogOpts{Tail: 2}, nil)
	require.NoError(t, err)
	got, err := io.ReadAll(rc)
	require.NoError(t, err)
	assert.Equal(t, "long3\nline5\n", string(got))
	require.NoError(t, rc.Close())
}

// BenchmarkRead is the cost of reading a log back, per line, as kubectl logs does.
func BenchmarkRead(b *testing.B) {
	path := filepath.Join(b.TempDir(), "0.log")
	w, err := logwriter.New(path, logwriter.Options{MaxSize: 1 << 20, MaxFiles: 5})
	require.NoError(b, err)
	const lines = 20000
	line := []byte(strings.Repeat("a typical log line of a hundred bytes or so, ", 2) + "\n")
	for range lines {
		_, err := w.Stdout().Write(line)
		require.NoError(b, err)
	}
	require.NoError(b, w.Close())
	for _, bc := range []struct {
		name string
		opts provider.ContainerLogOpts
	}{
		{name: "whole log"},
		{name: "timestamps", opts: provider.ContainerLogOpts{Timestamps: true}},
		{name: "tail 100", opts: provider.ContainerLogOpts{Tail: 100}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				require.NoError(b, Read(context.Background(), path, bc.opts, io.Discard, nil))
			}
			if bc.opts.Tail == 0 {
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*lines), "ns/line")
			}
		})
	}
}
