package cri

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/internal/crilog"
	"github.com/vk-static/vk-static/lifecycle"
)

// logMonitorPeriod is how often the kubelet's container log manager looks at log sizes.
const logMonitorPeriod = 10 * time.Second

// LogRotator rotates the logs of running containers, as the kubelet's container log manager:
// CRI runtimes write the log files but never rotate them. A log larger than Config.LogMaxSize
// is renamed to path.<UTC time>[.N] (the names package containerlog's reader and writer use,
// from internal/crilog) and the runtime told to reopen it (CRI ReopenContainerLog);
// the oldest rotated files are removed so that Config.LogMaxFiles remain, the current one
// included. Rotated files are not compressed (package containerlog reads them as they are).
type LogRotator struct{ r *Runtime }

// LogRotator is the runtime's log rotator; nil when Config.LogMaxSize is 0.
func (r *Runtime) LogRotator() *LogRotator {
	if r.cfg.LogMaxSize <= 0 {
		return nil
	}
	return &LogRotator{r: r}
}

// Run rotates every 10 seconds until ctx ends; failures are logged.
func (l *LogRotator) Run(ctx context.Context) error {
	ticker := l.r.cfg.Clock.NewTicker(logMonitorPeriod)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C():
		}
		if err := l.RotateOnce(ctx); err != nil && ctx.Err() == nil {
			klog.FromContext(ctx).Error(err, "Container log rotation failed")
		}
	}
}

// RotateOnce rotates every running container's log that is too large.
func (l *LogRotator) RotateOnce(ctx context.Context) error {
	containers, err := l.r.listContainers(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, c := range containers {
		if containerState(c.GetState()) != lifecycle.ContainerRunning {
			continue
		}
		path := l.logPath(ctx, c)
		if path == "" {
			continue
		}
		info, err := os.Stat(path)
		if err != nil || info.Size() < l.r.cfg.LogMaxSize {
			continue
		}
		if err := l.rotate(ctx, c.GetId(), path); err != nil {
			errs = append(errs, fmt.Errorf("container %s: %w", c.GetId(), err))
		}
	}
	return errors.Join(errs...)
}

// logPath is where c logs: the lifecycle's <log directory>/<name>/<attempt>.log under the
// log directory its sandbox was run with, so that a pass costs no ContainerStatus per
// container; for a sandbox of an earlier agent (its config unknown), what ContainerStatus
// says; "" when it cannot be known (removed meanwhile).
func (l *LogRotator) logPath(ctx context.Context, c *runtimeapi.Container) string {
	l.r.mu.Lock()
	sc := l.r.sandboxConfigs[c.GetPodSandboxId()]
	l.r.mu.Unlock()
	if sc != nil {
		md := c.GetMetadata()
		return filepath.Join(sc.GetLogDirectory(), md.GetName(), strconv.FormatUint(uint64(md.GetAttempt()), 10)+".log")
	}
	resp, err := l.r.rs.ContainerStatus(ctx, c.GetId(), false)
	if err != nil {
		return ""
	}
	return resp.GetStatus().GetLogPath()
}

func (l *LogRotator) rotate(ctx context.Context, id, path string) error {
	rotated, err := crilog.RotatedFiles(path)
	if err != nil {
		return err
	}
	// Keep LogMaxFiles-2 so that, with the one about to be rotated and the new current file,
	// LogMaxFiles remain.
	if err := crilog.RemoveExcess(rotated, max(l.r.cfg.LogMaxFiles-2, 0)); err != nil {
		return err
	}
	name := crilog.NextRotatedName(path, rotated, l.r.cfg.Clock.Now())
	if err := os.Rename(path, name); err != nil {
		return err
	}
	if err := l.r.rs.ReopenContainerLog(ctx, id); err != nil {
		// The runtime still writes to the renamed file: name it back, as the kubelet.
		if rerr := os.Rename(name, path); rerr != nil {
			return errors.Join(fmt.Errorf("reopen its log: %w", err), rerr)
		}
		return fmt.Errorf("reopen its log: %w", err)
	}
	return nil
}
