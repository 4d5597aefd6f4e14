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
// and kill the pods) and is reported once per distinct content. A missing or empty directory is
// an empty snapshot.
type FileSource struct {
	cfg FileConfig
	// files is the last read of every manifest file, by path. Only Run's goroutine uses it.
	files map[string]*manifestFile
	// pathProblem is why the last list could not read the path ("" when it could), so that a
	// missing or unreadable path is reported once, and its recovery once, not at every re-list.
	pathProblem string
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

	var changes fileChanges
	establish() // before the first list, so that nothing written after the list is missed
	if !send(s.list(ctx)) {
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C():
			logger.V(5).Info("Periodic re-list")
			if !send(s.list(ctx)) {
				return
			}
		case <-w.changed():
			changes.add(w.take(), w)
			if changes.debounced() && debounce == nil {
				debounce = clk.NewTimer(fileDebounce)
				debounceC = debounce.C()
			}
			// Created files (also read again after the debounce) are read now.
			if created := changes.takeCreated(); len(created) > 0 {
				if s.reread(ctx, created, true) && !send(s.snapshot()) {
					return
				}
			}
		case <-debounceC:
			debounce, debounceC = nil, nil
			var snap Snapshot
			if changes.relist {
				establish() // the directory may have been replaced
				snap = s.list(ctx)
			} else {
				s.reread(ctx, sortedKeys(changes.written), false)
				snap = s.snapshot()
			}
			changes = fileChanges{}
			if !send(snap) {
				return
			}
		case <-retryC:
			retry, retryC = nil, nil
			establish()
			if !send(s.list(ctx)) {
				return
			}
		}
	}
}

// list reads every manifest and returns the full snapshot.
func (s *FileSource) list(ctx context.Context) Snapshot {
	paths, missing, err := s.manifestPaths()
	s.reportPath(klog.FromContext(ctx), missing, err)
	if err != nil {
		// Not "missing" (that is an empty set, as for the kubelet): keep what we had.
		paths = make([]string, 0, len(s.files))
		for p := range s.files {
			paths = append(paths, p)
		}
	}
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
	return s.snapshot()
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

// reportPath says once that the path is missing or cannot be listed, and once that it can be
// read again: a mount that comes up late or a directory a configuration run creates later is
// worth one line at the default verbosity, not one per re-list.
func (s *FileSource) reportPath(logger klog.Logger, missing bool, err error) {
	problem := ""
	switch {
	case err != nil:
		problem = err.Error()
	case missing:
		problem = "does not exist"
	}
	if problem == s.pathProblem {
		return
	}
	switch {
	case err != nil:
		logger.Error(err, "Cannot list the manifest path; keeping the last good set until it can be")
	case missing:
		logger.Info("The manifest path does not exist; no static pods come from it until it appears")
	default:
		logger.Info("The manifest path can be read", "before", s.pathProblem)
	}
	s.pathProblem = problem
}

// manifestPaths lists the files to read, sorted by name, and reports whether the path is
// missing (no files, not an error).
func (s *FileSource) manifestPaths() (paths []string, missing bool, err error) {
	info, err := os.Stat(s.cfg.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, true, nil
	}
	if err != nil {
		return nil, false, err
	}
	if !info.IsDir() {
		return []string{s.cfg.Path}, false, nil
	}
	entries, err := os.ReadDir(s.cfg.Path) // sorted by name
	if errors.Is(err, fs.ErrNotExist) {
		return nil, true, nil
	}
	if err != nil {
		return nil, false, err
	}
	for _, e := range entries {
		if isManifestName(e.Name()) {
			paths = append(paths, filepath.Join(s.cfg.Path, e.Name()))
		}
	}
	return paths, false, nil
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

// readLimited reads at most MaxManifestBytes+1 bytes, so an oversized file is an error from
// DecodeManifest and never an out-of-memory.
func readLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if info.IsDir() {
		return nil, errIsDirectory
	}
	return io.ReadAll(io.LimitReader(f, MaxManifestBytes+1))
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
