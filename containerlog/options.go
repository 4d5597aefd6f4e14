package containerlog

import "time"

// ReadOptions shape what Read and Open return. Its fields are provider.ContainerLogOpts's, field
// for field, so that a provider converts with ReadOptions(opts) — and the log's writer
// (package logwriter), which the small supervisor binary links, needs nothing of node.
type ReadOptions struct {
	// Tail, when positive, starts the log that many lines before its end; zero or negative is
	// the whole log.
	Tail int
	// LimitBytes, when positive, ends the stream after that many bytes, possibly mid-line.
	LimitBytes int64
	// Timestamps prefixes every line with its time (RFC 3339 with nanoseconds) and a space.
	Timestamps bool
	// Follow keeps the stream open for new lines until done is closed (see Open).
	Follow bool
	// Previous is the caller's to apply: it chooses the path. Read and Open ignore it.
	Previous bool
	// SinceSeconds, when positive, leaves out lines older than that many seconds; SinceTime,
	// when set, lines older than it. If both are given the later bound applies.
	SinceSeconds int
	SinceTime    time.Time
}
