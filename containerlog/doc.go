// Package containerlog writes and reads container logs in the kubelet's CRI log format, the
// one containerd writes (internal/cri/io/logger.go) and the kubelet reads
// (k8s.io/cri-client/pkg/logs), one entry a line:
//
//	2016-10-06T00:17:09.669794202Z stdout P log content 1
//	2016-10-06T00:17:09.669794203Z stderr F log content 2
//
// — a timestamp (RFC 3339 with nanoseconds), the stream, a tag ("F" ends a line, "P" is a
// piece of one that the next entry continues), and the content.
//
// A Writer is the runtime's side: what a container writes to its stdout and stderr goes in
// line by line, each line stamped when it is complete, a line longer than MaxLineSize (16 KiB)
// cut into "P" entries and a final "F" as containerd cuts it, and output that ends without a
// newline written as a "P" entry on Close, as containerd does. It rotates the log itself, the
// way the kubelet's container log manager does (path renamed to path.20060102-150405, a new file
// opened, the oldest rotated files removed beyond MaxFiles), except that rotated files are kept
// uncompressed: the kubelet gzips them. An entry is never split across two files.
//
//	w, err := containerlog.NewWriter(path, containerlog.WriterOptions{MaxSize: 10 << 20, MaxFiles: 5})
//	cmd.Stdout, cmd.Stderr = w.Stdout(), w.Stderr()
//	... cmd.Wait(); w.Close()
//
// Read and Open are the kubelet's side, for a provider's GetContainerLogs. They read the whole
// retained history (the rotated files, oldest first, then the current one) and shape it with
// node.ContainerLogOpts as the kubelet shapes a log:
//
//   - since (SinceSeconds or SinceTime, the later of the two) leaves out lines whose time (their
//     first entry's) is before it;
//   - Tail then keeps the last that many of the lines left; a line is counted whole, however
//     many "P" entries it was cut into (the kubelet counts entries, so its tail may start
//     mid-line, and applies tail before since, which differs only if the clock went back);
//   - LimitBytes ends the output after that many bytes, possibly mid-line;
//   - Timestamps prefixes each line with its first entry's time, in the kubelet's fixed-width
//     form (2006-01-02T15:04:05.000000000Z07:00), and a space;
//   - an "F" entry's content is followed by a newline, a "P" entry's is not;
//   - Follow waits for new entries and follows rotations (watching the log's directory with
//     fsnotify) until the caller's done channel is closed — the container has terminated — and
//     what was written until then has been read, or until ctx ends.
//
// Malformed entries are skipped (logged at V(4)), not fatal, as the kubelet skips them. Only the
// CRI format is read, not the Docker JSON one the kubelet also accepts, nor the kubelet's
// gzipped rotated files. opts.Previous is the caller's to apply: it chooses the path.
//
//	rc, err := containerlog.Open(ctx, path, opts, containerExited)
//	if err != nil { ... }    // a missing log is errors.Is(err, fs.ErrNotExist)
//	defer rc.Close()
//	io.Copy(w, rc)
package containerlog
