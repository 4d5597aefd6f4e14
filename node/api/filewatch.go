package api

import (
	"context"
	"errors"
	"time"

	"github.com/fsnotify/fsnotify"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// fileRecheckInterval is how often watchFiles says the files may have changed whatever fsnotify
// reports, as k8s.io/apiserver's dynamiccertificates re-reads its files every minute: a watch
// follows the file it was put on, so a file replaced by re-pointing a symlink (a secret
// volume's ..data swap) sends no event, and a watch that could not be put on a missing file is
// tried again then.
const fileRecheckInterval = time.Minute

// watchFiles calls changed after any of files may have changed — an fsnotify event on it, and
// every recheck regardless — and once at the start, in case one changed before its watch was
// set. It returns when ctx ends, its watch closed. changed must not block: a burst of events
// is as many calls. A file removed or renamed is watched again under its name (a rename over
// it is how most tools replace a file); if that fails it is tried again each recheck.
func watchFiles(ctx context.Context, clk clock.WithTicker, recheck time.Duration, files []string, changed func()) {
	logger := klog.FromContext(ctx)
	var events <-chan fsnotify.Event
	var errs <-chan error
	watched := map[string]bool{}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		// Rechecks alone still pick changes up, a minute late.
		logger.Error(err, "Cannot watch the kubelet API's certificate files; re-reading them periodically only", "interval", recheck)
	} else {
		defer w.Close()
		events, errs = w.Events, w.Errors
	}
	watch := func() {
		if w == nil {
			return
		}
		for _, f := range files {
			if watched[f] {
				continue
			}
			if err := w.Add(f); err != nil {
				logger.V(2).Info("Cannot watch a certificate file yet", "file", f, "err", err)
				continue
			}
			watched[f] = true
		}
	}
	watch()
	changed()

	ticker := clk.NewTicker(recheck)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case e, ok := <-events:
			if !ok { // fsnotify gave up: rechecks alone
				events, errs = nil, nil
				continue
			}
			if e.Has(fsnotify.Remove) || e.Has(fsnotify.Rename) {
				// The watch went with the old file; a new one under the name watches its successor.
				if err := w.Remove(e.Name); err != nil && !errors.Is(err, fsnotify.ErrNonExistentWatch) {
					logger.V(2).Info("Cannot remove a certificate file's watch", "file", e.Name, "err", err)
				}
				delete(watched, e.Name)
				watch()
			}
			changed()
		case err, ok := <-errs:
			if !ok {
				events, errs = nil, nil
				continue
			}
			// An overflowed queue lost events: re-read.
			logger.V(2).Info("Watching the kubelet API's certificate files", "err", err)
			changed()
		case <-ticker.C():
			watch()
			changed()
		}
	}
}
