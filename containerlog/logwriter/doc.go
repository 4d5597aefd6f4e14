// Package logwriter writes a container's log in the kubelet's CRI log format (package
// containerlog describes it and reads it back): it is the runtime's side, and has no dependency
// beyond the standard library so that a container's supervisor can link it and stay small.
//
// What a container writes to its stdout and stderr goes in line by line, each line stamped when
// it is complete, a line longer than MaxLineSize (16 KiB) cut into "P" entries and a final "F"
// as containerd cuts it, and output that ends without a newline written as a "P" entry on
// Close, as containerd does. The Writer rotates the log itself, the way the kubelet's container
// log manager does (path renamed to path.20060102-150405, a new file opened, the oldest rotated
// files removed beyond MaxFiles), except that rotated files are kept uncompressed: the kubelet
// gzips them. An entry is never split across two files.
//
//	w, err := logwriter.New(path, logwriter.Options{MaxSize: 10 << 20, MaxFiles: 5})
//	cmd.Stdout, cmd.Stderr = w.Stdout(), w.Stderr()
//	... cmd.Wait(); w.Close()
package logwriter
