// Package containerlog reads container logs in the kubelet's CRI log format, the
// one containerd writes (internal/cri/io/logger.go) and the kubelet reads
// (k8s.io/cri-client/pkg/logs), one entry a line:
//
//	2016-10-06T00:17:09.669794202Z stdout P log content 1
//	2016-10-06T00:17:09.669794203Z stderr F log content 2
//
// — a timestamp (RFC 3339 with nanoseconds), the stream, a tag ("F" ends a line, "P" is a
// piece of one that the next entry continues), and the content.
//
// Package logwriter writes it (the runtime's side, in a container's supervisor); this package
// reads it (the kubelet's side). They share the format and the naming of rotated files
// (internal/crilog).
//
// Read and Open are the kubelet's side, for a provider's GetContainerLogs. They read the whole
// retained history (the rotated files, oldest first, then the current one) and shape it with
// the provider.ContainerLogOpts that GetContainerLogs was given, as the kubelet shapes a log:
//
//   - since (SinceSeconds or SinceTime, the later of the two) leaves out lines whose time (their
//     first entry's) is before it;
//   - Tail then keeps the last that many of the lines left; a line is counted whole, however
//     many "P" entries it was cut into (the kubelet counts entries, so its tail may start
//     mid-line, and applies tail before since, which differs only if the clock went back);
//     without Follow the output ends after those lines, even if more were written meanwhile;
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
