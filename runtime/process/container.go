package process

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vk-static/vk-static/lifecycle"
	"github.com/vk-static/vk-static/provider"
	"github.com/vk-static/vk-static/runtime/process/internal/procfs"
	"github.com/vk-static/vk-static/runtime/process/internal/protocol"
	"github.com/vk-static/vk-static/runtime/process/internal/records"
)

// RunSandbox records a pod and makes its cgroup; for a restricted pod it starts the pod's
// namespace holder ([Runtime.startHolder]), whose PID, IPC and UTS namespaces its containers join,
// and puts it on the pod network unless the pod is on the host's (ownNetwork).
func (r *Runtime) RunSandbox(ctx context.Context, cfg *lifecycle.SandboxConfig) (string, error) {
	if err := runtimeHandler(cfg); err != nil {
		return "", err // before anything is made: the pod waits, as on a runtime without the handler
	}
	ownNetwork, err := r.ownNetwork(cfg.Pod)
	if err != nil {
		return "", fmt.Errorf("sandbox: %w", err) // before anything is made: it waits for the network
	}
	id := newID()
	dir := r.sandboxDir(id)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", fmt.Errorf("sandbox: %w", err)
	}
	rec := &sandboxRecord{ID: id, Config: *cfg, CreatedAt: r.clock.Now()}
	if cfg.DNS != nil || ownNetwork {
		if err := writeResolvConf(dir, cfg.DNS); err != nil {
			os.RemoveAll(dir)
			return "", fmt.Errorf("sandbox: %w", err)
		}
		rec.ResolvConf = true
	}
	cg, err := r.podCgroup(cfg.Pod)
	if err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("sandbox: %w", err)
	}
	rec.Cgroups = cg
	if r.restricted(cfg.Pod) {
		if err := r.isolate(ctx, rec, ownNetwork); err != nil {
			os.RemoveAll(dir)
			return "", fmt.Errorf("sandbox: %w", err)
		}
	}
	// Not synced into its directory (WriteJSONNew): a power cut may lose the new record whole,
	// never in part, and a lost sandbox is one never made — its directory goes when the runtime
	// starts (removeUnrecorded), the lifecycle removes containers of a sandbox it does not find
	// and runs the pod a new one; its cgroup and processes did not outlive the cut either.
	if err := records.WriteJSONNew(filepath.Join(dir, sandboxFile), rec); err != nil {
		_ = r.detach(ctx, rec)
		_ = killHolder(rec.Holder)
		os.RemoveAll(dir)
		return "", fmt.Errorf("sandbox: %w", err)
	}
	logger(ctx).V(4).Info("Sandbox created", "sandbox", id, "pod", cfg.Namespace+"/"+cfg.Name)
	return id, nil
}

// StopSandbox marks the sandbox NotReady: it takes it off the pod network, and kills its
// namespace holder — what is left in the pod's PID namespace ends with it.
func (r *Runtime) StopSandbox(ctx context.Context, sandboxID string) error {
	rec, err := r.loadSandbox(sandboxID)
	if err != nil {
		return err
	}
	if rec.Stopped {
		return killHolder(rec.Holder)
	}
	if err := r.detach(ctx, rec); err != nil {
		return err
	}
	if err := killHolder(rec.Holder); err != nil {
		return err
	}
	rec.Stopped = true
	return records.WriteJSONAtomic(filepath.Join(r.sandboxDir(sandboxID), sandboxFile), rec)
}

// RemoveSandbox forgets the sandbox, and removes its pod's cgroup when no other sandbox of the
// pod is left.
func (r *Runtime) RemoveSandbox(ctx context.Context, sandboxID string) error {
	rec, err := r.loadSandbox(sandboxID)
	if err != nil {
		return err
	}
	if !rec.Stopped {
		if err := r.detach(ctx, rec); err != nil {
			return err
		}
	}
	if err := killHolder(rec.Holder); err != nil {
		return err
	}
	if err := os.RemoveAll(r.sandboxDir(sandboxID)); err != nil {
		return err
	}
	return r.removePodCgroup(ctx, rec)
}

var _ lifecycle.SandboxAddresser = (*Runtime)(nil)

// SandboxIPs reports the pod's addresses on the pod network; none for a pod on the host's
// network, which has the node's. The sandbox must be recorded (lifecycle.SandboxAddresser: one
// record read, where ListSandboxes reads every one).
func (r *Runtime) SandboxIPs(ctx context.Context, sandboxID string) ([]string, error) {
	rec, err := r.loadSandbox(sandboxID)
	if err != nil {
		return nil, err
	}
	return rec.IPs, nil
}

// ListSandboxes reports every recorded sandbox.
func (r *Runtime) ListSandboxes(ctx context.Context) ([]*lifecycle.SandboxStatus, error) {
	ids, err := r.listIDs(sandboxesDir)
	if err != nil {
		return nil, err
	}
	var out []*lifecycle.SandboxStatus
	for _, id := range ids {
		rec, err := r.loadSandbox(id)
		if err != nil {
			continue // removed meanwhile, or still being written
		}
		out = append(out, sandboxStatus(rec))
	}
	return out, nil
}

func sandboxStatus(rec *sandboxRecord) *lifecycle.SandboxStatus {
	st := &lifecycle.SandboxStatus{
		ID:        rec.ID,
		PodUID:    rec.Config.PodUID,
		Namespace: rec.Config.Namespace,
		Name:      rec.Config.Name,
		Attempt:   rec.Config.Attempt,
		State:     lifecycle.SandboxReady,
		CreatedAt: rec.CreatedAt,
		Labels:    rec.Config.Labels,
		IPs:       rec.IPs,
	}
	if rec.Stopped || !holderAlive(rec.Holder) {
		// A holder gone (killed, or a reboot) leaves no namespaces to start containers in:
		// the lifecycle makes the pod a new sandbox.
		st.State = lifecycle.SandboxNotReady
	}
	return st
}

// CreateContainer records what to run (config.json); nothing runs yet.
func (r *Runtime) CreateContainer(ctx context.Context, sandboxID string, cfg *lifecycle.ContainerConfig) (string, error) {
	sb, err := r.loadSandbox(sandboxID)
	if err != nil {
		return "", err
	}
	if sb.Stopped {
		return "", fmt.Errorf("sandbox %s is stopped", sandboxID)
	}
	user := r.containerUser(cfg)
	if !r.root && (user.UID != r.defaultUser.UID) {
		return "", fmt.Errorf("container %s: the agent is not root and runs containers only as itself (uid %d), not as uid %d", cfg.Name, r.defaultUser.UID, user.UID)
	}
	id := newID()
	dir := r.containerDir(id)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", fmt.Errorf("container %s: %w", cfg.Name, err)
	}
	rec := &containerRecord{
		ID:             id,
		SandboxID:      sandboxID,
		CreatedAt:      r.clock.Now(),
		Config:         *cfg,
		User:           *user,
		SetCredentials: r.root,
		LogMaxSize:     r.cfg.LogMaxSize,
		LogMaxFiles:    r.cfg.LogMaxFiles,
	}
	rec.Config.User = nil // User is the decided one
	rec.Config.Mounts = append(r.resolvConfMount(sb), cfg.Mounts...)
	rec.Sandbox = r.containerSandbox(sb, cfg.Pod, cfg.Container)
	if rec.Cgroups, err = r.containerCgroup(sb, id, cfg); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("container %s: %w", cfg.Name, err)
	}
	// Not synced into its directory (WriteJSONNew): the supervisor's first state.json, written
	// with a sync of this same directory, makes it durable with it — one directory sync per
	// container where there were two. A power cut before that loses the container whole (its
	// directory goes when the runtime starts, removeUnrecorded) and nothing of it ran: the
	// lifecycle creates it again. A container started is never without its config.json.
	if err := records.WriteJSONNew(filepath.Join(dir, records.ContainerFile), rec); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("container %s: %w", cfg.Name, err)
	}
	logger(ctx).V(4).Info("Container created", "container", id, "name", cfg.Name, "sandbox", sandboxID)
	return id, nil
}

// StartContainer starts the container's supervisor, which starts the workload and reports
// back; it returns once the workload runs, or with the reason it could not be started (then
// the container is Exited with Reason StartError).
func (r *Runtime) StartContainer(ctx context.Context, containerID string) error {
	rec, err := r.loadContainer(containerID)
	if err != nil {
		return err
	}
	dir := r.containerDir(containerID)
	r.mu.Lock()
	if r.starting[containerID] || r.watches[containerID] != nil {
		r.mu.Unlock()
		return fmt.Errorf("container %s is already started", containerID)
	}
	r.starting[containerID] = true
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.starting, containerID)
		r.mu.Unlock()
	}()
	if st, err := r.readState(containerID); err != nil {
		return err
	} else if st != nil {
		return fmt.Errorf("container %s was started before: a container starts once", containerID)
	}

	cmd, conn, err := r.launchSupervisor(rec, dir)
	if err != nil {
		if rerr := r.recordStartError(ctx, containerID, fmt.Errorf("start the supervisor: %w", err)); rerr != nil {
			return fmt.Errorf("container %s: start the supervisor: %w; %w", containerID, err, rerr)
		}
		return fmt.Errorf("container %s: start the supervisor: %w", containerID, err)
	}
	reader := bufio.NewReader(conn)
	stopAfter := context.AfterFunc(ctx, func() { _ = conn.SetReadDeadline(time.Unix(1, 0)) })
	report, err := protocol.ReadStartReport(reader)
	stopAfter()
	if err == nil && report.Error != "" {
		conn.Close()
		_ = cmd.Wait()
		// The supervisor records the start error; when it could not, the runtime does, or the
		// container would read as never started.
		if st, serr := r.readState(containerID); serr == nil && st == nil {
			if rerr := r.recordStartError(ctx, containerID, errors.New(report.Error)); rerr != nil {
				return fmt.Errorf("container %s: %s: %w; %w", containerID, report.Error, ErrStartFailed, rerr)
			}
		}
		return fmt.Errorf("container %s: %s: %w", containerID, report.Error, ErrStartFailed)
	}
	if err != nil {
		// The supervisor died before reporting, or ctx ended: it must not go on unwatched.
		conn.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		r.concludeLost(ctx, containerID, fmt.Sprintf("the supervisor did not report the start: %v", err))
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		return fmt.Errorf("container %s: the supervisor did not report the start: %w", containerID, err)
	}
	_ = conn.SetReadDeadline(time.Time{})
	w := &watch{id: containerID, sandboxID: rec.SandboxID, labels: rec.Config.Labels, conn: conn, reader: reader, cmd: cmd, done: make(chan struct{})}
	logger(ctx).V(4).Info("Container started", "container", containerID, "name", rec.Config.Name, "pid", report.Pid)
	r.emit(lifecycle.ContainerEvent{ContainerID: containerID, SandboxID: rec.SandboxID, Type: lifecycle.ContainerStartedEvent, Labels: rec.Config.Labels})
	r.track(w)
	return nil
}

// ErrStartFailed is wrapped by StartContainer's error when the command could not be started
// (the container is then Exited with Reason StartError and the error's text as Message).
var ErrStartFailed = errors.New("start failed")

// launchSupervisor starts the container's supervisor (Config.SupervisorPath, else the agent
// binary again): in its own session (it outlives the agent), with stdio on /dev/null, a
// socketpair on protocol.ReportFd, and — for the mounts — in a mount namespace of its own (a
// user namespace too when the agent is not root, mapping only the agent's ids).
func (r *Runtime) launchSupervisor(rec *containerRecord, dir string) (*exec.Cmd, *net.UnixConn, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "report"), os.NewFile(uintptr(fds[1]), "report")
	defer theirs.Close()
	defer ours.Close() // FileConn dups it

	attr := &syscall.SysProcAttr{Setsid: true}
	switch {
	case r.root:
		attr.Cloneflags = syscall.CLONE_NEWNS
	case len(rec.Config.Mounts) > 0:
		// The supervisor keeps its own ids in the namespace, so execve would drop the
		// capabilities the namespace gives it; an ambient CAP_SYS_ADMIN survives to mount with
		// (its launcher keeps it from the workload).
		attr.Cloneflags = syscall.CLONE_NEWNS | syscall.CLONE_NEWUSER
		attr.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN}
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, nil, err
	}
	cmd := &exec.Cmd{
		Path:        r.supervisor,
		Args:        []string{protocol.Arg0, rec.ID},
		Env:         supervisorEnv(abs),
		Dir:         "/",
		ExtraFiles:  []*os.File{theirs}, // fd 3 (protocol.ReportFd)
		SysProcAttr: attr,
	}
	// The supervisor's own stderr: where a crash of it leaves its reason.
	stderr, err := os.OpenFile(filepath.Join(dir, records.SupervisorLogFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, err
	}
	defer stderr.Close()
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	fc, err := net.FileConn(ours)
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, nil, err
	}
	return cmd, fc.(*net.UnixConn), nil
}

// recordStartError records a container that could not be started, when the supervisor could
// not record it itself; an error says it could not be written (recordEnd keeps it meanwhile).
func (r *Runtime) recordStartError(ctx context.Context, id string, cause error) error {
	now := r.clock.Now()
	return r.recordEnd(ctx, id, &records.State{
		State: records.StateExited, StartedAt: now, FinishedAt: now,
		ExitCode: records.StartErrorExitCode, Reason: ReasonStartError, Message: cause.Error(),
	})
}

// supervisorEnv is the supervisor's whole environment: the marker, GOMAXPROCS=1, and GORACE
// when set (a race-enabled binary otherwise sleeps a second at every exit).
//
// GOMAXPROCS=1: a supervisor copies output and waits, and never needs two CPUs at once, while
// each P the Go runtime sets up at start (one per CPU) costs it private memory: on two CPUs
// 1.01–1.09 MB RssAnon, with one 0.82 MB, every one of 100 supervisors on the node
// (docs/performance.md, process-100). The environment is read before the runtime starts, which
// a call to runtime.GOMAXPROCS in the supervisor would be too late for. The workload and its
// execs never get it: they get the container's environment only.
func supervisorEnv(dir string) []string {
	return append([]string{protocol.EnvName + "=" + dir}, binaryEnv()...)
}

// binaryEnv is the environment of every process of the supervisor binary the runtime starts
// (a supervisor, a pod's namespace holder): GOMAXPROCS=1, and GORACE when set.
func binaryEnv() []string {
	env := []string{"GOMAXPROCS=1"}
	if v, ok := os.LookupEnv("GORACE"); ok {
		env = append(env, "GORACE="+v)
	}
	return env
}

// ErrNotRunning: the container is not running (Exec, Attach, ContainerStats).
var ErrNotRunning = errors.New("container is not running")

// StopContainer signals the workload's process group, waits up to grace for it to end, then
// kills the group and waits again.
func (r *Runtime) StopContainer(ctx context.Context, containerID string, grace time.Duration) error {
	rec, err := r.loadContainer(containerID)
	if err != nil {
		return err
	}
	w := r.watchOf(containerID)
	if w == nil {
		return nil // never started, or ended
	}
	st, err := records.ReadState(r.containerDir(containerID))
	if err != nil || st == nil || st.State != records.StateRunning {
		return err
	}
	sig := syscall.SIGTERM
	if rec.Config.StopSignal != 0 {
		sig = syscall.Signal(rec.Config.StopSignal)
	}
	log := logger(ctx).WithValues("container", containerID, "name", rec.Config.Name)
	log.V(4).Info("Stopping container", "signal", sig, "grace", grace)
	if grace > 0 {
		if err := signalWorkload(st, sig); err != nil {
			return err
		}
		timer := r.clock.NewTimer(grace)
		defer timer.Stop()
		select {
		case <-w.done:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C():
		}
		log.V(4).Info("Grace period over, killing container")
	}
	if err := signalWorkload(st, syscall.SIGKILL); err != nil {
		return err
	}
	// And whatever left the workload's process group (setsid, a daemon): the cgroup holds it.
	r.killCgroup(ctx, rec)
	select {
	case <-w.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// signalWorkload signals the workload's process group, unless its pid has since gone to
// another process.
func signalWorkload(st *records.State, sig syscall.Signal) error {
	if err := procfs.SameProcess(st.Pid, st.PidStartTime); err != nil {
		if errors.Is(err, procfs.ErrProcessGone) {
			return nil // ended; its watch reports it
		}
		return err
	}
	if err := syscall.Kill(-st.Pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal %v to process group %d: %w", sig, st.Pid, err)
	}
	return nil
}

// RemoveContainer deletes a container's records; its log stays.
func (r *Runtime) RemoveContainer(ctx context.Context, containerID string) error {
	rec, err := r.loadContainer(containerID)
	if err != nil {
		return err
	}
	r.mu.Lock()
	_, running := r.watches[containerID]
	starting := r.starting[containerID]
	r.mu.Unlock()
	if running || starting {
		return fmt.Errorf("container %s: %w: stop it first", containerID, errRunning)
	}
	if st, err := r.readState(containerID); err != nil {
		return err
	} else if st != nil && st.State == records.StateRunning {
		// Not watched here (a Runtime closed meanwhile), but its supervisor may run it still.
		return fmt.Errorf("container %s: %w: stop it first", containerID, errRunning)
	}
	if err := r.removeCgroup(ctx, rec); err != nil {
		return err
	}
	if err := os.RemoveAll(r.containerDir(containerID)); err != nil {
		return err
	}
	r.mu.Lock()
	delete(r.unrecorded, containerID)
	r.mu.Unlock()
	return nil
}

var errRunning = errors.New("container is running")

// ContainerStatus reports one container from its records.
func (r *Runtime) ContainerStatus(ctx context.Context, containerID string) (*lifecycle.ContainerStatus, error) {
	rec, err := r.loadContainer(containerID)
	if err != nil {
		return nil, err
	}
	st, err := r.readState(containerID)
	if err != nil {
		return nil, err
	}
	return containerStatus(rec, st), nil
}

// ListContainers reports every recorded container.
func (r *Runtime) ListContainers(ctx context.Context) ([]*lifecycle.ContainerStatus, error) {
	ids, err := r.listIDs(containersDir)
	if err != nil {
		return nil, err
	}
	var out []*lifecycle.ContainerStatus
	for _, id := range ids {
		s, err := r.ContainerStatus(ctx, id)
		if err != nil {
			if provider.IsNotFound(err) {
				continue // removed meanwhile, or still being created
			}
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func containerStatus(rec *containerRecord, st *records.State) *lifecycle.ContainerStatus {
	s := &lifecycle.ContainerStatus{
		ID:        rec.ID,
		SandboxID: rec.SandboxID,
		Name:      rec.Config.Name,
		Attempt:   rec.Config.Attempt,
		State:     lifecycle.ContainerCreated,
		CreatedAt: rec.CreatedAt,
		LogPath:   rec.Config.LogPath,
		Labels:    rec.Config.Labels,
	}
	if st == nil {
		return s
	}
	s.StartedAt, s.FinishedAt = st.StartedAt, st.FinishedAt
	s.ExitCode, s.Reason, s.Message = st.ExitCode, st.Reason, st.Message
	switch st.State {
	case records.StateRunning:
		s.State = lifecycle.ContainerRunning
	case records.StateExited:
		s.State = lifecycle.ContainerExited
	default:
		s.State = lifecycle.ContainerUnknown
	}
	return s
}
