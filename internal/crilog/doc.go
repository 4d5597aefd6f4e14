// Package crilog is the CRI log format and file layout that package logwriter writes and
// package containerlog reads, and the CRI provider rotates: entries (timestamp, stream, tag, content, one a line) and the
// naming and listing of a log's rotated files, oldest first.
//
//	buf = crilog.AppendEntry(buf, stamp, crilog.StreamStdout, false, line)
//	...
//	var e crilog.Entry
//	err := crilog.ParseEntry(line, &e)
package crilog
