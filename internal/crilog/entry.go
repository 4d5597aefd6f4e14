package crilog

import (
	"bytes"
	"errors"
	"fmt"
	"time"
)

// The CRI log format, one entry a line:
//
//	<timestamp> <stream> <tag> <content>\n
//
// as containerd writes it (internal/cri/io/logger.go) and the kubelet reads it
// (k8s.io/cri-client/pkg/logs).
const (
	// TimeFormatWrite is what entries are stamped with: containerd's format (variable width).
	TimeFormatWrite = time.RFC3339Nano
	// timeFormatRead parses any RFC 3339 timestamp with up to nanoseconds, whatever its width or
	// zone, as the kubelet does.
	timeFormatRead = "2006-01-02T15:04:05.999999999Z07:00"
	// TimeFormatOut is the kubelet's fixed-width format for the timestamps it prefixes lines
	// with (opts.Timestamps), so that they line up.
	TimeFormatOut = "2006-01-02T15:04:05.000000000Z07:00"

	StreamStdout = "stdout"
	StreamStderr = "stderr"

	// tagFull ends a line; tagPartial is a piece of a line that continues in the next entry.
	tagFull    = 'F'
	tagPartial = 'P'
	// tagDelimiter separates the tag the kubelet reads (the first) from any that follow it
	// ("P:TAG1:TAG2"), which are kept for forward compatibility and ignored.
	tagDelimiter = ':'

	// MaxLineSize is the longest content one entry carries: a longer line is cut into "P"
	// entries of this size and a final "F" — containerd's default max_container_log_line_size.
	MaxLineSize = 16 * 1024
)

// errMalformed marks an entry that is not in the CRI format; readers skip such entries.
var errMalformed = errors.New("malformed CRI log Entry")

// Entry is one parsed line of a log file. Its slices point into the line it was parsed from.
type Entry struct {
	Time    time.Time
	Stream  []byte
	Partial bool
	// Content is without the entry's end of line.
	Content []byte
}

// ParseEntry parses line (with or without its trailing newline) into e.
func ParseEntry(line []byte, e *Entry) error {
	line = bytes.TrimSuffix(line, []byte{'\n'})
	stamp, rest, ok := bytes.Cut(line, []byte{' '})
	if !ok {
		return fmt.Errorf("%w: no timestamp", errMalformed)
	}
	t, err := time.Parse(timeFormatRead, string(stamp))
	if err != nil {
		return fmt.Errorf("%w: timestamp: %w", errMalformed, err)
	}
	stream, rest, ok := bytes.Cut(rest, []byte{' '})
	if !ok {
		return fmt.Errorf("%w: no stream", errMalformed)
	}
	if string(stream) != StreamStdout && string(stream) != StreamStderr {
		return fmt.Errorf("%w: unknown stream %q", errMalformed, stream)
	}
	tags, content, ok := bytes.Cut(rest, []byte{' '})
	if !ok {
		return fmt.Errorf("%w: no tag", errMalformed)
	}
	partial, ok := parseTag(tags)
	if !ok {
		return fmt.Errorf("%w: unknown tag %q", errMalformed, tags)
	}
	*e = Entry{Time: t, Stream: stream, Partial: partial, Content: content}
	return nil
}

// parseTag reads the first of an entry's tags.
func parseTag(tags []byte) (partial, ok bool) {
	first, _, _ := bytes.Cut(tags, []byte{tagDelimiter})
	if len(first) != 1 {
		return false, false
	}
	switch first[0] {
	case tagFull:
		return false, true
	case tagPartial:
		return true, true
	}
	return false, false
}

// EntryHeader reads the tag of the entry whose first bytes are head and, if withTime, its
// timestamp — what counting lines from the end of a log needs, without the content. head need
// only hold the entry's header (timestamp, stream and tag).
func EntryHeader(head []byte, withTime bool) (t time.Time, partial, ok bool) {
	stamp, rest, ok := bytes.Cut(head, []byte{' '})
	if !ok {
		return time.Time{}, false, false
	}
	_, rest, ok = bytes.Cut(rest, []byte{' '})
	if !ok {
		return time.Time{}, false, false
	}
	tags, _, ok := bytes.Cut(rest, []byte{' '})
	if !ok {
		return time.Time{}, false, false
	}
	if partial, ok = parseTag(tags); !ok {
		return time.Time{}, false, false
	}
	if withTime {
		var err error
		if t, err = time.Parse(timeFormatRead, string(stamp)); err != nil {
			return time.Time{}, false, false
		}
	}
	return t, partial, true
}

// MaxHeaderSize bounds an entry's header: a timestamp with a zone offset (35), the stream (6),
// a tag with a few extra tags, and the three spaces.
const MaxHeaderSize = 64

// AppendEntry appends one entry to buf: stamp must be formatted with timeFormatWrite.
func AppendEntry(buf, stamp []byte, stream string, partial bool, content []byte) []byte {
	tag := byte(tagFull)
	if partial {
		tag = tagPartial
	}
	buf = append(buf, stamp...)
	buf = append(buf, ' ')
	buf = append(buf, stream...)
	buf = append(buf, ' ', tag, ' ')
	buf = append(buf, content...)
	return append(buf, '\n')
}

// EntrySize is the size AppendEntry adds to a buffer.
func EntrySize(stamp []byte, stream string, content []byte) int64 {
	return int64(len(stamp) + 1 + len(stream) + 3 + len(content) + 1)
}
