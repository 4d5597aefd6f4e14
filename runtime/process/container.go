package process

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/vk-static/vk-static/lifecycle"
	"github.com/vk-static/vk-static/provider"
	"github.com/vk-static/vk-static/runtime/process/internal/procfs"
	"github.com/vk-static/vk-static/runtime/process/internal/records"
)

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
	if rec.Cgroups, err = r.containerCgroup(sb, id, cfg); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("container %s: %w", cfg.Name, err)
	}
	if err := records.WriteJSONAtomic(filepath.Join(dir, records.ContainerFile), rec); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("container %s: %w", cfg.Name, err)
	}
	logger(ctx).V(4).Info("Container created", "container", id, "name", cfg.Name, "sandbox", sandboxID)
	return id, nil
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
