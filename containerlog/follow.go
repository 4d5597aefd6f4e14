package containerlog

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vk-static/vk-static/internal/crilog"
)

// Following a log: at the end of the file being read, either that file has been rotated away
// and the next one in the log follows it (successor), or it is still the newest and the reader
// waits for the log's directory to change (wait). Files are told apart by identity (os.SameFile),
// not by name, since a rotation renames them: whatever the renames and removals between two
// looks, the reader goes on with the file that comes after its own in the log's order, so no
// line is read twice, and none is lost unless removed before it could be read.

// errDone: the done channel was closed while waiting.
var errDone = errors.New("done")

// successorAttempts bounds how often successor lists the log again when the next file changed
// between the listing and its opening (rotated away, removed); each time needs a rotation within
// a few system calls, so a second attempt all but always succeeds.
const successorAttempts = 5

// successor returns, opened, the file that follows the current one in the log if the current
// one has been rotated away; nil if it is still the newest.
func (r *reader) successor() (*openedFile, error) {
	if info, err := os.Stat(r.path); err == nil && os.SameFile(info, r.cur.info) {
		return nil, nil // The common case, without listing the directory.
	}
	for range successorAttempts {
		files, err := crilog.ListFiles(r.path)
		if err != nil {
			return nil, err
		}
		i := slices.IndexFunc(files, func(f crilog.LogFile) bool { return os.SameFile(f.Info, r.cur.info) })
		// i < 0: removed, as the oldest rotated file is: every file left is newer.
		if i+1 >= len(files) {
			return nil, nil
		}
		next, err := r.takeListed(files[i+1])
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errReplaced) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return &next, nil
	}
	return nil, nil // Still changing: the next look will tell.
}

// takeListed opens a listed file, or takes it from the spare files opened with the first
// listing, closing those before it: they have been removed, or were passed.
func (r *reader) takeListed(l crilog.LogFile) (openedFile, error) {
	if i := slices.IndexFunc(r.spare, func(f openedFile) bool { return os.SameFile(f.info, l.Info) }); i >= 0 {
		f := r.spare[i]
		closeFiles(r.spare[:i])
		r.spare = r.spare[i+1:]
		return f, nil
	}
	return openListed(l)
}

// wait waits for a change to the log's files (a write, a rotation), done, or the end of ctx.
// Only the watch tells of a change: no polling. A lost event (the watch's queue overflowed)
// is reported as an error on the watch, and is taken as a change.
func (r *reader) wait(ctx context.Context, done <-chan struct{}) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-done:
			return errDone
		case event, ok := <-r.watcher.Events:
			if !ok {
				return fmt.Errorf("container log %s: the watch ended", r.path)
			}
			if r.concerns(event.Name) {
				return nil
			}
		case err, ok := <-r.watcher.Errors:
			if !ok {
				return fmt.Errorf("container log %s: the watch ended", r.path)
			}
			r.logger.V(4).Info("Container log watch error; reading again", "err", err)
			return nil
		}
	}
}

// concerns tells whether a file of the watched directory is one of this log's.
func (r *reader) concerns(name string) bool {
	base := filepath.Base(name)
	return base == r.base || strings.HasPrefix(base, r.base+".")
}
