package process

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/vk-static/vk-static/lifecycle"
	"github.com/vk-static/vk-static/runtime/process/internal/records"
)

// RunSandbox records a pod. Its processes share the host's network and everything else but
// their mounts, so there is nothing to create.
func (r *Runtime) RunSandbox(ctx context.Context, cfg *lifecycle.SandboxConfig) (string, error) {
	id := newID()
	dir := r.sandboxDir(id)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", fmt.Errorf("sandbox: %w", err)
	}
	rec := &sandboxRecord{ID: id, Config: *cfg, CreatedAt: r.clock.Now()}
	cg, err := r.podCgroup(cfg.Pod)
	if err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("sandbox: %w", err)
	}
	rec.Cgroups = cg
	// Not synced into its directory (WriteJSONNew): a power cut may lose the new record whole,
	// never in part, and a lost sandbox is one never made — its directory goes when the runtime
	// starts (removeUnrecorded), the lifecycle removes containers of a sandbox it does not find
	// and runs the pod a new one; its cgroup and processes did not outlive the cut either.
	if err := records.WriteJSONNew(filepath.Join(dir, sandboxFile), rec); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("sandbox: %w", err)
	}
	logger(ctx).V(4).Info("Sandbox created", "sandbox", id, "pod", cfg.Namespace+"/"+cfg.Name)
	return id, nil
}

// StopSandbox marks the sandbox NotReady.
func (r *Runtime) StopSandbox(ctx context.Context, sandboxID string) error {
	rec, err := r.loadSandbox(sandboxID)
	if err != nil {
		return err
	}
	if rec.Stopped {
		return nil
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
	if err := os.RemoveAll(r.sandboxDir(sandboxID)); err != nil {
		return err
	}
	return r.removePodCgroup(ctx, rec)
}

var _ lifecycle.SandboxAddresser = (*Runtime)(nil)

// SandboxIPs reports none: processes have the host's addresses. The sandbox must be recorded
// (lifecycle.SandboxAddresser: one record read, where ListSandboxes reads every one).
func (r *Runtime) SandboxIPs(ctx context.Context, sandboxID string) ([]string, error) {
	_, err := r.loadSandbox(sandboxID)
	return nil, err
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
	}
	if rec.Stopped {
		st.State = lifecycle.SandboxNotReady
	}
	return st
}
