package process

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"golang.org/x/sys/unix"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/vk-static/vk-static/lifecycle"
	"github.com/vk-static/vk-static/provider"
	"github.com/vk-static/vk-static/runtime/process/internal/cgroup"
	"github.com/vk-static/vk-static/runtime/process/internal/podnet"
	"github.com/vk-static/vk-static/runtime/process/internal/records"
)

var _ lifecycle.Runtime = (*Runtime)(nil)

// Runtime runs containers as host processes, each under a supervisor process that outlives
// the agent. See the package documentation.
type Runtime struct {
	cfg         Config
	clock       clock.Clock
	root        bool            // the agent is root: workloads get the configured users
	defaultUser *lifecycle.User // who runs a container whose config names nobody
	// hostAccounts are the host's users and groups (Admit, containerUser); nil is /etc/passwd
	// and /etc/group. Tests give their own, not to depend on the machine's.
	hostAccounts hostAccounts
	// supervisor is the binary StartContainer starts as a container's supervisor.
	supervisor string
	// masked are the paths restricted containers see as empty (Config.MaskedPaths, StateDir).
	masked []string
	// network is the pod network (Config.CNI); nil without.
	network *podnet.Network
	// cgroups is the pods' cgroup hierarchy; nil without, and then cgroupsErr says why.
	cgroups    *cgroup.Hierarchy
	cgroupsErr error

	mu       sync.Mutex
	closed   bool
	watches  map[string]*watch // running containers, by id
	starting map[string]bool
	// unrecorded are the ends of containers that could not be written to their state.json,
	// by id (recordEnd): reported from here until the container is removed.
	unrecorded  map[string]*records.State
	subscribers map[*subscriber]struct{}
	wg          sync.WaitGroup // watch goroutines
	// lock holds StateDir's lockFile, flocked, from New until Close; nil once released.
	lock *os.File
}

// lockFile, in StateDir, is flocked by the Runtime that uses the directory: New removes
// directories without their record (removeUnrecorded) and takes up every container, which a
// second agent on the same directory — two on one root directory, or a restart overlapping the
// old agent — would do to the directories the other is still making and the supervisors it
// watches. The lock goes with its holder, however it ends.
const lockFile = "runtime.lock"

// ErrStateDirInUse: another Runtime (in this or another process) holds the state directory.
var ErrStateDirInUse = errors.New("the state directory is in use by another agent")

// New opens (creating if needed) the runtime's state directory and takes up watching every
// container a previous agent left running; call Close when done.
func New(cfg Config) (*Runtime, error) {
	if cfg.StateDir == "" {
		return nil, errors.New("process runtime: StateDir is required")
	}
	if cfg.LogMaxSize < 0 || (cfg.LogMaxSize > 0 && cfg.LogMaxFiles < 2) {
		return nil, fmt.Errorf("process runtime: log rotation of %d bytes keeping %d files: keep at least 2", cfg.LogMaxSize, cfg.LogMaxFiles)
	}
	r := &Runtime{
		cfg:         cfg,
		clock:       cfg.Clock,
		root:        os.Geteuid() == 0,
		watches:     map[string]*watch{},
		starting:    map[string]bool{},
		unrecorded:  map[string]*records.State{},
		subscribers: map[*subscriber]struct{}{},
	}
	if r.clock == nil {
		r.clock = clock.RealClock{}
	}
	supervisor, err := supervisorBinary(cfg.SupervisorPath)
	if err != nil {
		return nil, fmt.Errorf("process runtime: %w", err)
	}
	r.supervisor = supervisor
	if c := cfg.CNI; c != nil {
		r.network = podnet.New(podnet.Config{ConfDir: c.ConfDir, BinDirs: c.BinDirs, CacheDir: c.CacheDir})
	}
	for _, p := range append([]string{cfg.StateDir}, cfg.MaskedPaths...) {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, fmt.Errorf("process runtime: masked path %s: %w", p, err)
		}
		if !slices.Contains(r.masked, abs) {
			r.masked = append(r.masked, abs)
		}
	}
	if r.root {
		u, err := resolveUser(cfg.DefaultUser)
		if err != nil {
			return nil, fmt.Errorf("process runtime: default user: %w", err)
		}
		r.defaultUser = u
	} else {
		r.defaultUser = agentUser()
	}
	r.initCgroups()
	for _, d := range []string{sandboxesDir, containersDir} {
		if err := os.MkdirAll(filepath.Join(cfg.StateDir, d), 0o700); err != nil {
			return nil, fmt.Errorf("process runtime: %w", err)
		}
	}
	if err := r.lockStateDir(); err != nil {
		return nil, err
	}
	r.removeUnrecorded()
	if err := r.adoptAll(); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// Close stops watching containers. It does not stop them: their supervisors keep them running
// and the next Runtime on the same StateDir takes them up again. The cgroups of pods nothing
// runs in are removed (removeIdlePodCgroups).
func (r *Runtime) Close() error {
	r.mu.Lock()
	r.closed = true
	for _, w := range r.watches {
		w.conn.Close()
	}
	lock := r.lock
	r.lock = nil
	r.mu.Unlock()
	r.wg.Wait()
	if lock != nil {
		// While the state directory is still this Runtime's.
		r.removeIdlePodCgroups()
		return lock.Close() // releases the flock
	}
	return nil
}

// lockStateDir takes StateDir's lockFile, or fails at once (ErrStateDirInUse) if another
// Runtime holds it. The file is close-on-exec: the supervisors, which outlive the agent, never
// hold it.
func (r *Runtime) lockStateDir() error {
	path := filepath.Join(r.cfg.StateDir, lockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("process runtime: lock the state directory: %w", err)
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if errors.Is(err, unix.EWOULDBLOCK) {
		f.Close()
		return fmt.Errorf("process runtime: %w: %s (%s is locked); stop that agent or give this one another directory", ErrStateDirInUse, r.cfg.StateDir, path)
	}
	if err != nil {
		f.Close()
		return fmt.Errorf("process runtime: lock %s: %w", path, err)
	}
	r.lock = f
	return nil
}

func (r *Runtime) containerDir(id string) string {
	return filepath.Join(r.cfg.StateDir, containersDir, id)
}

func (r *Runtime) sandboxDir(id string) string {
	return filepath.Join(r.cfg.StateDir, sandboxesDir, id)
}

// removeUnrecorded removes the directories of sandboxes and containers whose record is not
// there: their first record, not synced into its directory (records.WriteJSONNew), was lost to
// a power cut, or the agent died between the directory and the record. Nothing of them runs
// (a container starts only once its config.json is written), and nothing refers to them that
// could still use them. Called by New, before any record is made.
func (r *Runtime) removeUnrecorded() {
	for dir, file := range map[string]string{sandboxesDir: sandboxFile, containersDir: records.ContainerFile} {
		ids, err := r.listIDs(dir)
		if err != nil {
			continue
		}
		for _, id := range ids {
			d := filepath.Join(r.cfg.StateDir, dir, id)
			if _, err := os.Lstat(filepath.Join(d, file)); errors.Is(err, fs.ErrNotExist) {
				_ = os.RemoveAll(d)
			}
		}
	}
}

// loadContainer reads a container's config.json; an unknown id is NotFound.
func (r *Runtime) loadContainer(id string) (*containerRecord, error) {
	if validID(id) != nil {
		return nil, provider.NotFound("container %q", id)
	}
	var rec containerRecord
	if err := records.ReadJSON(filepath.Join(r.containerDir(id), records.ContainerFile), &rec); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, provider.NotFound("container %q", id)
		}
		return nil, err
	}
	return &rec, nil
}

// loadSandbox reads a sandbox's sandbox.json; an unknown id is NotFound.
func (r *Runtime) loadSandbox(id string) (*sandboxRecord, error) {
	if validID(id) != nil {
		return nil, provider.NotFound("sandbox %q", id)
	}
	var rec sandboxRecord
	if err := records.ReadJSON(filepath.Join(r.sandboxDir(id), sandboxFile), &rec); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, provider.NotFound("sandbox %q", id)
		}
		return nil, err
	}
	return &rec, nil
}

// listIDs returns the ids of the records under dir (sandboxes or containers).
func (r *Runtime) listIDs(dir string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(r.cfg.StateDir, dir))
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, e := range entries {
		if e.IsDir() && validID(e.Name()) == nil {
			ids = append(ids, e.Name())
		}
	}
	return ids, nil
}

func logger(ctx context.Context) klog.Logger {
	return klog.FromContext(ctx).WithName("process")
}
