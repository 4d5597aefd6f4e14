package cri

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

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
	containers, err := l.r.ListContainers(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, c := range containers {
		if c.State != lifecycle.ContainerRunning || c.LogPath == "" {
			continue
		}
		info, err := os.Stat(c.LogPath)
		if err != nil || info.Size() < l.r.cfg.LogMaxSize {
			continue
		}
		if err := l.rotate(ctx, c.ID, c.LogPath); err != nil {
			errs = append(errs, fmt.Errorf("container %s: %w", c.ID, err))
		}
	}
	return errors.Join(errs...)
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
