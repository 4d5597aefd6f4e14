package crilog

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseEntry(t *testing.T) {
	stamp := time.Date(2016, 10, 20, 18, 39, 20, 576064430, time.UTC)
	for _, tc := range []struct {
		name, line string
		want       Entry
		malformed  bool
	}{
		{name: "stdout full", line: "2016-10-20T18:39:20.57606443Z stdout F cri stdout test log\n",
			want: Entry{Time: stamp, Stream: []byte("stdout"), Content: []byte("cri stdout test log")}},
		{name: "stderr full without newline", line: "2016-10-20T18:39:20.57606443Z stderr F cri stderr test log",
			want: Entry{Time: stamp, Stream: []byte("stderr"), Content: []byte("cri stderr test log")}},
		{name: "partial", line: "2016-10-20T18:39:20.57606443Z stdout P cri stdout partial test log\n",
			want: Entry{Time: stamp, Stream: []byte("stdout"), Partial: true, Content: []byte("cri stdout partial test log")}},
		{name: "partial with more tags", line: "2016-10-20T18:39:20.57606443Z stdout P:TAG1:TAG2 cri stdout partial test log\n",
			want: Entry{Time: stamp, Stream: []byte("stdout"), Partial: true, Content: []byte("cri stdout partial test log")}},
		{name: "empty content", line: "2016-10-20T18:39:20.57606443Z stdout F \n",
			want: Entry{Time: stamp, Stream: []byte("stdout"), Content: []byte{}}},
		{name: "content with spaces kept", line: "2016-10-20T18:39:20.57606443Z stdout F  a  b \n",
			want: Entry{Time: stamp, Stream: []byte("stdout"), Content: []byte(" a  b ")}},
		{name: "zone offset", line: "2016-10-20T13:39:20.57606443-05:00 stdout F x\n",
			want: Entry{Time: stamp.In(time.FixedZone("", -5*3600)), Stream: []byte("stdout"), Content: []byte("x")}},
		{name: "not CRI", line: "unsupported log format test log\n", malformed: true},
		{name: "docker JSON", line: `{"log":"x","stream":"stdout","time":"2016-10-20T18:39:20.57606443Z"}` + "\n", malformed: true},
		{name: "bad stream", line: "2016-10-20T18:39:20.57606443Z stdin F x\n", malformed: true},
		{name: "bad tag", line: "2016-10-20T18:39:20.57606443Z stdout X x\n", malformed: true},
		{name: "no tag", line: "2016-10-20T18:39:20.57606443Z stdout\n", malformed: true},
		{name: "no content separator", line: "2016-10-20T18:39:20.57606443Z stdout F\n", malformed: true},
		{name: "empty", line: "\n", malformed: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var e Entry
			err := ParseEntry([]byte(tc.line), &e)
			if tc.malformed {
				require.ErrorIs(t, err, errMalformed)
				return
			}
			require.NoError(t, err)
			assert.True(t, tc.want.Time.Equal(e.Time), "time %v, want %v", e.Time, tc.want.Time)
			assert.Equal(t, tc.want.Time.Format(TimeFormatOut), e.Time.Format(TimeFormatOut), "the zone is kept")
			assert.Equal(t, string(tc.want.Stream), string(e.Stream))
			assert.Equal(t, tc.want.Partial, e.Partial)
			assert.Equal(t, string(tc.want.Content), string(e.Content))
		})
	}
}

func TestAppendEntryParsesBack(t *testing.T) {
	stamp := time.Date(2024, 1, 2, 3, 4, 5, 600, time.UTC).AppendFormat(nil, TimeFormatWrite)
	line := AppendEntry(nil, stamp, StreamStderr, true, []byte("hello world"))
	assert.Equal(t, "2024-01-02T03:04:05.0000006Z stderr P hello world\n", string(line))
	assert.EqualValues(t, len(line), EntrySize(stamp, StreamStderr, []byte("hello world")))
	var e Entry
	require.NoError(t, ParseEntry(line, &e))
	assert.True(t, e.Partial)
	assert.Equal(t, "hello world", string(e.Content))

	stampTime, partial, ok := EntryHeader(line[:min(len(line), MaxHeaderSize)], true)
	assert.True(t, ok)
	assert.True(t, partial)
	assert.True(t, stampTime.Equal(time.Date(2024, 1, 2, 3, 4, 5, 600, time.UTC)))
}
