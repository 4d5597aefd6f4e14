package sources

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/vk-static/vk-static/backoff"
	"github.com/vk-static/vk-static/podutil"
)

// DefaultFileCheckFrequency is how often the file source re-lists as a safety net for missed
// fsnotify events (the kubelet's --file-check-frequency default).
const DefaultFileCheckFrequency = 20 * time.Second

// fileDebounce lets a burst of writes (an editor saving in place, a writer in several chunks)
// settle into one read. A manifest created or renamed into place does not wait for it (see
// fileChanges).
const fileDebounce = 20 * time.Millisecond

// watchRetry is the back-off for re-establishing file watches that could not be set up.
func watchRetry() backoff.Policy {
	return backoff.Policy{Initial: 100 * time.Millisecond, Max: 10 * time.Second}
}

// FileConfig configures a FileSource.
type FileConfig struct {
	// Path is a directory (every *.yaml, *.yml and *.json in it, not recursive; dotfiles and
	// other names ignored) or a single manifest file. Symlinks are followed. Required.
	Path string
	// NodeName is the node the static pods are for. Required.
	NodeName string
	// CheckFrequency is the period of the full re-list; 0 means DefaultFileCheckFrequency.
	CheckFrequency time.Duration
	// Problems receives manifests that fail to decode (once per distinct failure); nil:
	// they are only logged.
	Problems ProblemReporter
	// Clock drives the re-list, debounce and back-off; nil means the real clock.
	Clock clock.WithTicker
}

// FileSource reads static pod manifests from a directory or a file and sends full snapshots
// whenever they change: on fsnotify events and on a periodic re-list.
//
// A file that fails to decode keeps the pods it last decoded to (the kubelet would drop them
// and kill the pods) and is reported once per distinct content. An empty directory (or an empty
// file) is an empty snapshot; removing a manifest from a directory that can be listed removes
// its pods.
//
// The path itself that does not exist or cannot be read (a mount that comes up late, a
// directory a configuration run creates later, one removed and recreated, permissions) is not
// an empty set, unlike in the kubelet: it is reported once, naming the path and the reason, as a
// Problem wrapping ErrSourceUnavailable, and nothing is sent for it. So a source that has not
// been seen stays unseen — no pod the provider still runs from before a restart is stopped
// because of it — and one that has been seen keeps its last snapshot: its pods keep running
// until the path is back, as for a manifest that cannot be read. The periodic re-list and the
// watch on the path's parent notice it coming back (the watches are re-established then); a
// full list then decides, so the pods of manifests that are no longer there stop only once a
// directory can be listed again, and the recovery is reported once (see RecoveryReporter). A
// symlink switched atomically to another directory (`ln -sfn new tmp && mv -T tmp path`) never
// goes missing: the new target's pods replace the old one's at once. To stop every pod of a
// single-file path, empty the file rather than removing it.
//
// A directory removed file by file (rm -r) can show its files gone before the directory is: a
// manifest whose removal is read (after fileDebounce) while the directory still exists is
// removed like any other.
type FileSource struct {
	cfg FileConfig
	// files is the last read of every manifest file, by path. Only Run's goroutine uses it.
	files map[string]*manifestFile
	// path is whether the path could be listed last time (reported once each way); listed is
	// whether the files were last read by a full list of it, so that changes to single files
	// may be sent: after the path was unavailable, only a full list may send again.
	path   availability
	listed bool
}

// manifestFile is what the source knows about one file.
type manifestFile struct {
	digest  [sha256.Size]byte // of the content last read
	failure string            // non-empty when that content was rejected (already reported)
	pods    []*corev1.Pod     // the last good decode (kept while the file is bad)
}

// NewFileSource validates cfg and returns a source ready to Run.
func NewFileSource(cfg FileConfig) (*FileSource, error) {
	if cfg.Path == "" {
		return nil, errors.New("sources: FileConfig.Path is required")
	}
	if cfg.NodeName == "" {
		return nil, errors.New("sources: FileConfig.NodeName is required")
	}
	if cfg.CheckFrequency < 0 {
		return nil, fmt.Errorf("sources: FileConfig.CheckFrequency must not be negative, got %v", cfg.CheckFrequency)
	}
	if cfg.CheckFrequency == 0 {
		cfg.CheckFrequency = DefaultFileCheckFrequency
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	cfg.Path = filepath.Clean(cfg.Path)
	return &FileSource{cfg: cfg, files: map[string]*manifestFile{}}, nil
}

// Name is podutil.FileSource.
func (s *FileSource) Name() string { return podutil.FileSource }

// Run sends a snapshot at once, then one after every change, until ctx is done. It returns only
// after its goroutines have stopped.
func (s *FileSource) Run(ctx context.Context, out chan<- Snapshot) {
	logger := klog.FromContext(ctx).WithValues("source", podutil.FileSource, "path", s.cfg.Path)
	ctx = klog.NewContext(ctx, logger)
	clk := s.cfg.Clock
	w := newDirWatch(s.cfg.Path)
	defer w.close()

	// retry re-establishes watches that could not be set up, with back-off. The parent watch
	// makes the common case (the directory removed and recreated) immediate; this covers the
	// rest (the parent missing too, inotify limits).
	var retry clock.Timer
	var retryC <-chan time.Time
	delays := watchRetry().Start()
	establish := func() {
		if w.establish(logger) {
			delays.Reset()
			return
		}
		if retry == nil {
			retry = clk.NewTimer(delays.Next())
			retryC = retry.C()
		}
	}
	defer func() {
		if retry != nil {
			retry.Stop()
		}
	}()

	// debounce lets a burst of writes settle into one read (see fileChanges).
	var debounce clock.Timer
	var debounceC <-chan time.Time
	defer func() {
		if debounce != nil {
			debounce.Stop()
		}
	}()

	ticker := clk.NewTicker(s.cfg.CheckFrequency)
	defer ticker.Stop()

	var last Snapshot
	first := true
	send := func(snap Snapshot) bool {
		if !first && samePods(last.Pods, snap.Pods) && slices.Equal(last.Unreadable, snap.Unreadable) {
			return true
		}
		select {
		case out <- snap:
			first, last = false, snap
			return true
		case <-ctx.Done():
			return false
		}
	}

	// list sends a full snapshot, or nothing while the path is unavailable (see FileSource).
	list := func() bool {
		snap, ok := s.list(ctx)
		return !ok || send(snap)
	}

	var changes fileChanges
	establish() // before the first list, so that nothing written after the list is missed
	if !list() {
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C():
			logger.V(5).Info("Periodic re-list")
			if retry == nil && (!s.listed || w.incomplete()) {
				// The path may have appeared where no watch could see it (its parent missing
				// too): watch it before listing, so that nothing written after the list is missed.
				establish()
			}
			if !list() {
				return
			}
		case <-w.changed():
			changes.add(w.take(), w)
			if !s.listed {
				changes.relist = true // only a full list may send after the path was unavailable
			}
			if changes.debounced() && debounce == nil {
				debounce = clk.NewTimer(fileDebounce)
				debounceC = debounce.C()
			}
			// Created files (also read again after the debounce) are read now.
			if created := changes.takeCreated(); len(created) > 0 && s.listed {
				if s.reread(ctx, created, true) && !send(s.snapshot()) {
					return
				}
			}
		case <-debounceC:
			debounce, debounceC = nil, nil
			relist := changes.relist || s.pathUnavailable()
			written := sortedKeys(changes.written)
			changes = fileChanges{}
			if relist {
				establish() // the directory may have been replaced
				if !list() {
					return
				}
				continue
			}
			s.reread(ctx, written, false)
			if !send(s.snapshot()) {
				return
			}
		case <-retryC:
			retry, retryC = nil, nil
			establish()
			if !list() {
				return
			}
		}
	}
}

// pathUnavailable reports whether the path itself is gone or cannot be looked at, when a change
// to a file in it is about to be read: a file that is gone because its directory is gone must
// not be taken for a removed manifest (a full list says the path is unavailable instead).
func (s *FileSource) pathUnavailable() bool {
	_, err := os.Stat(s.cfg.Path)
	return err != nil
}

// list reads every manifest and returns the full snapshot. When the path cannot be listed it
// reports that (once), changes nothing and returns false: nothing is to be sent.
func (s *FileSource) list(ctx context.Context) (Snapshot, bool) {
	logger := klog.FromContext(ctx)
	paths, err := s.manifestPaths()
	if err != nil {
		s.listed = false
		s.path.unavailable(logger, s.cfg.Problems, Problem{
			Source: podutil.FileSource, Location: s.cfg.Path, Err: fmt.Errorf("%w: %w", ErrSourceUnavailable, err),
		})
		return Snapshot{}, false
	}
	s.path.available(logger, s.cfg.Problems)
	s.listed = true
	present := make(map[string]bool, len(paths))
	for _, path := range paths {
		if _, ok := s.read(ctx, path); ok {
			present[path] = true
		}
	}
	for path := range s.files {
		if !present[path] {
			delete(s.files, path)
		}
	}
	return s.snapshot(), true
}

// reread reads only paths (fsnotify named them), forgetting the ones that are gone, and the
// ones a file it read anew was renamed from (see forgetRenamedAway). A tentative read (of a file
// just created) applies only content that decodes; anything else waits for the debounced read,
// which the caller has scheduled. It reports whether anything was applied.
func (s *FileSource) reread(ctx context.Context, paths []string, tentative bool) bool {
	applied := false
	var changed []string
	for _, path := range paths {
		prev := s.files[path]
		if tentative {
			f, ok := s.readTentatively(ctx, path)
			if !ok {
				continue
			}
			s.files[path] = f
		} else if _, ok := s.read(ctx, path); !ok {
			delete(s.files, path)
		}
		applied = true
		if f := s.files[path]; f != nil && f != prev {
			changed = append(changed, path)
		}
	}
	if len(changed) > 0 {
		s.forgetRenamedAway(klog.FromContext(ctx), changed)
	}
	return applied
}

// snapshot is the full snapshot of what the source last read, files by name.
func (s *FileSource) snapshot() Snapshot {
	snap := Snapshot{Source: podutil.FileSource, Locations: map[types.UID]string{}}
	paths := make([]string, 0, len(s.files))
	for p := range s.files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, path := range paths {
		f := s.files[path]
		if f.failure != "" && len(f.pods) == 0 {
			snap.Unreadable = append(snap.Unreadable, path)
		}
		for _, pod := range f.pods {
			snap.Pods = append(snap.Pods, pod)
			snap.Locations[pod.UID] = path
		}
	}
	return snap
}

// manifestPaths lists the files to read, sorted by name. A path that does not exist is an
// error (errors.Is fs.ErrNotExist), naming the path, as one that cannot be listed is.
func (s *FileSource) manifestPaths() ([]string, error) {
	info, err := os.Stat(s.cfg.Path)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		if !info.Mode().IsRegular() {
			return nil, fmt.Errorf("%s is neither a directory nor a regular file (%v)", s.cfg.Path, info.Mode().Type())
		}
		return []string{s.cfg.Path}, nil
	}
	entries, err := os.ReadDir(s.cfg.Path) // sorted by name
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, e := range entries {
		if isManifestName(e.Name()) {
			paths = append(paths, filepath.Join(s.cfg.Path, e.Name()))
		}
	}
	return paths, nil
}

// isManifestName accepts *.yaml, *.yml and *.json that are not dotfiles; editor leftovers
// (*~, *.swp) and everything else are ignored.
func isManifestName(name string) bool {
	if strings.HasPrefix(name, ".") {
		return false
	}
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// read reads and decodes one file, reusing the previous decode when the content is unchanged.
// It returns false when the file is gone (or is a directory).
func (s *FileSource) read(ctx context.Context, path string) (*manifestFile, bool) {
	logger := klog.FromContext(ctx)
	prev := s.files[path]
	data, err := readLimited(path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errIsDirectory) {
		return nil, false
	}
	if err != nil {
		// Unreadable for now (permissions, I/O): keep the last good pods.
		f := prev
		if f == nil {
			f = &manifestFile{}
			s.files[path] = f
		}
		s.reject(logger, path, f, "read:"+err.Error(), err)
		return f, true
	}
	digest := sha256.Sum256(data)
	if prev != nil && prev.digest == digest && !strings.HasPrefix(prev.failure, "read:") {
		return prev, true
	}
	f := &manifestFile{digest: digest}
	if prev != nil {
		f.pods, f.failure = prev.pods, prev.failure
	}
	s.files[path] = f
	pods, err := DecodeManifest(data, DecodeOptions{NodeName: s.cfg.NodeName, Source: podutil.FileSource, Location: path, Clock: s.cfg.Clock})
	if err != nil {
		s.reject(logger, path, f, fmt.Sprintf("content:%x", digest), err)
		return f, true
	}
	f.pods, f.failure = pods, ""
	return f, true
}

// readTentatively reads a file that was just created. It returns the file's new state only
// when its content decodes (or is unchanged); it records and reports nothing, and changes
// nothing, otherwise.
func (s *FileSource) readTentatively(ctx context.Context, path string) (*manifestFile, bool) {
	prev := s.files[path]
	data, err := readLimited(path)
	if err != nil || len(data) == 0 {
		return nil, false
	}
	digest := sha256.Sum256(data)
	if prev != nil && prev.digest == digest {
		return prev, prev.failure == ""
	}
	pods, err := DecodeManifest(data, DecodeOptions{NodeName: s.cfg.NodeName, Source: podutil.FileSource, Location: path, Clock: s.cfg.Clock})
	if err != nil {
		klog.FromContext(ctx).V(4).Info("Manifest just created does not decode yet; reading it again after the debounce", "file", path, "err", err)
		return nil, false
	}
	return &manifestFile{digest: digest, pods: pods}, true
}

// reject reports a bad file once per distinct failure (see report for who logs it); its last
// good pods stay.
func (s *FileSource) reject(logger klog.Logger, path string, f *manifestFile, key string, err error) {
	if f.failure == key {
		return
	}
	f.failure = key
	logger.V(4).Info("Keeping the last good pods of a rejected manifest", "file", path, "keptPods", len(f.pods))
	report(logger, s.cfg.Problems, Problem{Source: podutil.FileSource, Location: path, Err: err})
}

var errIsDirectory = errors.New("is a directory")

// ErrNotRegular: a manifest name that is not a regular file — a FIFO, a device, a socket, or a
// symbolic link to one — is not read: a FIFO's open or read blocks until a writer comes, and
// opening a device can act on it (a watchdog arms when opened).
var ErrNotRegular = errors.New("not a regular file")

// readLimited reads at most MaxManifestBytes+1 bytes, so an oversized file is an error from
// DecodeManifest and never an out-of-memory. Only a regular file is opened (ErrNotRegular), and
// without blocking: should a FIFO take the file's place between the look and the open, the
// open returns at once and the descriptor tells.
func readLimited(path string) ([]byte, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := regular(path, info); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if info, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := regular(path, info); err != nil {
		return nil, err
	}
	return io.ReadAll(io.LimitReader(f, MaxManifestBytes+1))
}

// regular says why path, described by info, is not a manifest to read; like os.Open's errors,
// the error names the file.
func regular(path string, info fs.FileInfo) error {
	switch {
	case info.IsDir():
		return errIsDirectory
	case !info.Mode().IsRegular():
		return fmt.Errorf("%s: %w (%s): a manifest is read from a regular file only", path, ErrNotRegular, fileType(info.Mode()))
	}
	return nil
}

// fileType names a mode's type for a person.
func fileType(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return m.Type().String()
}

// samePods reports whether two snapshots hold the very same pod objects in the same order
// (the source reuses a file's pods while its content is unchanged).
func samePods(a, b []*corev1.Pod) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
