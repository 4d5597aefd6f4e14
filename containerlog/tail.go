package containerlog

import (
	"bytes"
	"fmt"
	"io"
	"time"

	"github.com/vk-static/vk-static/internal/crilog"
)

// tailBlockSize is how much of a file tailStart reads at a time, from its end backwards.
const tailBlockSize = 32 * 1024

// tailStart finds where the last n lines of files (the log's files, oldest first) that are not
// older than since start: the index of the file and the offset in it. Since first, then tail,
// as provider.ContainerLogOpts orders them: lines older than since are not counted (the reader
// leaves them out anyway), so even a log whose clock went back gives n lines if it has them.
// A line is a run of entries ending with an "F" entry (or with the end of the log), so that a
// line cut into "P" entries counts once and a tail never starts in the middle of one; its time
// is its first entry's. Malformed entries and an incomplete entry at the end of a file (one
// being written) are not counted. A log with fewer lines starts at its beginning.
//
// Reading backwards from the end, like the kubelet's findTailLineStartIndex, costs what the
// tail is, not what the log is.
func tailStart(files []openedFile, n int, since time.Time) (int, int64, error) {
	c := lineCounter{want: n, since: since}
	buf := make([]byte, tailBlockSize)
	for i := len(files) - 1; i >= 0; i-- {
		off, found, err := c.scan(files[i].file, files[i].info.Size(), buf)
		if err != nil {
			return 0, 0, fmt.Errorf("container log %s: finding the last %d lines: %w", files[i].name, n, err)
		}
		if found {
			return i, off, nil
		}
	}
	return 0, 0, nil
}

// lineCounter counts lines from the end of a log, entry by entry.
type lineCounter struct {
	want  int
	since time.Time
	lines int
	// open: entries of a line have been seen, not yet its first; first is the time of the
	// earliest seen.
	open  bool
	first time.Time
}

// visit counts one entry, given from the last to the first, and reports whether the wanted lines
// start right after it.
func (c *lineCounter) visit(t time.Time, partial bool) (startsAfter bool) {
	if !partial && c.open {
		// An "F" entry ends the line before the open one, which is therefore complete.
		if !c.first.Before(c.since) {
			c.lines++
		}
		c.open = false
		if c.lines == c.want {
			return true
		}
	}
	// This entry is the earliest seen of its line, so far.
	c.open, c.first = true, t
	return false
}

// scan walks the complete entries of f (its first size bytes) from the last to the first and
// returns the offset where the wanted lines start, if they start in this file.
func (c *lineCounter) scan(f io.ReaderAt, size int64, buf []byte) (int64, bool, error) {
	var head [crilog.MaxHeaderSize]byte
	// visitEntry counts the complete entry [start, end] (end is its '\n'); block holds the
	// file from blockStart on, as far as it was read.
	visitEntry := func(start, end int64, block []byte, blockStart int64) (bool, error) {
		h := head[:min(int64(len(head)), end-start)]
		if off := start - blockStart; off+int64(len(h)) <= int64(len(block)) {
			copy(h, block[off:])
		} else if _, err := f.ReadAt(h, start); err != nil {
			return false, err
		}
		t, partial, ok := crilog.EntryHeader(h, !c.since.IsZero())
		return ok && c.visit(t, partial), nil
	}
	end := int64(-1) // the '\n' of the entry after the one being looked for; none yet
	for right := size; right > 0; {
		left := max(0, right-int64(len(buf)))
		block := buf[:right-left]
		if _, err := f.ReadAt(block, left); err != nil && err != io.EOF {
			return 0, false, err
		}
		for rest := block; ; {
			i := bytes.LastIndexByte(rest, '\n')
			if i < 0 {
				break
			}
			nl := left + int64(i)
			if end >= 0 {
				found, err := visitEntry(nl+1, end, block, left)
				if err != nil {
					return 0, false, err
				}
				if found {
					return end + 1, true, nil
				}
			}
			end = nl
			rest = rest[:i]
		}
		right = left
	}
	if end >= 0 {
		// The file's first entry.
		found, err := visitEntry(0, end, nil, 0)
		if err != nil {
			return 0, false, err
		}
		if found {
			return end + 1, true, nil
		}
	}
	return 0, false, nil
}
