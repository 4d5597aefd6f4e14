package eviction

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Host measures the signals on this machine.
type Host struct {
	// RootDir is on the nodefs: the agent's --root-dir, where the pods' volumes and logs are.
	RootDir string
	// ImageFs returns a directory on the runtime's image filesystem (CRI ImageFsInfo's
	// mountpoint); nil, or "" returned, measures the nodefs as the imagefs, as the kubelet's
	// stats do when images are on the node's filesystem.
	ImageFs func(ctx context.Context) (string, error)
	// Proc is where procfs is mounted; default /proc. Tests point it at a fake.
	Proc string
}

// Measure observes every signal it can; one that cannot be read is left out (and its
// thresholds never met), as the kubelet leaves out what its stats lack.
func (h *Host) Measure(ctx context.Context) (Observations, error) {
	now := time.Now()
	obs := Observations{}
	if avail, total, err := h.memory(); err == nil {
		obs[SignalMemoryAvailable] = Observation{
			Available: resource.NewQuantity(avail, resource.BinarySI),
			Capacity:  resource.NewQuantity(total, resource.BinarySI), Time: now,
		}
	}
	nodefs, err := statfs(h.RootDir, now)
	if err != nil {
		return nil, fmt.Errorf("nodefs (%s): %w", h.RootDir, err)
	}
	obs[SignalNodeFsAvailable], obs[SignalNodeFsInodesFree] = nodefs.bytes, nodefs.inodes
	imagefs := nodefs
	if h.ImageFs != nil {
		if dir, err := h.ImageFs(ctx); err == nil && dir != "" {
			if fs, err := statfs(dir, now); err == nil {
				imagefs = fs
			}
		}
	}
	obs[SignalImageFsAvailable], obs[SignalImageFsInodesFree] = imagefs.bytes, imagefs.inodes
	if avail, max, err := h.pids(); err == nil {
		obs[SignalPIDAvailable] = Observation{
			Available: resource.NewQuantity(avail, resource.DecimalSI),
			Capacity:  resource.NewQuantity(max, resource.DecimalSI), Time: now,
		}
	}
	return obs, nil
}

func (h *Host) proc() string {
	if h.Proc != "" {
		return h.Proc
	}
	return "/proc"
}

// memory is MemAvailable and MemTotal. The kubelet takes the root cgroup's working set from
// the capacity, which counts the page cache it could reclaim much as MemAvailable does.
func (h *Host) memory() (avail, total int64, err error) {
	data, err := os.ReadFile(h.proc() + "/meminfo")
	if err != nil {
		return 0, 0, err
	}
	found := 0
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		v, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			continue
		}
		switch f[0] {
		case "MemTotal:":
			total, found = v*1024, found+1
		case "MemAvailable:":
			avail, found = v*1024, found+1
		}
	}
	if found != 2 {
		return 0, 0, fmt.Errorf("%s/meminfo has no MemTotal or MemAvailable", h.proc())
	}
	return avail, total, nil
}

// pids is what the kubelet's pidlimit.Stats gives: the lower of kernel.pid_max and
// kernel.threads-max, less the tasks /proc/loadavg counts.
func (h *Host) pids() (avail, max int64, err error) {
	max = -1
	for _, f := range []string{"/sys/kernel/pid_max", "/sys/kernel/threads-max"} {
		data, err := os.ReadFile(h.proc() + f)
		if err != nil {
			continue
		}
		if v, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64); err == nil && (max < 0 || v < max) {
			max = v
		}
	}
	if max < 0 {
		return 0, 0, fmt.Errorf("no pid_max nor threads-max in %s/sys/kernel", h.proc())
	}
	data, err := os.ReadFile(h.proc() + "/loadavg")
	if err != nil {
		return 0, 0, err
	}
	fields := strings.Fields(string(data))
	if len(fields) < 5 {
		return 0, 0, fmt.Errorf("not enough fields in %s/loadavg", h.proc())
	}
	_, tasks, ok := strings.Cut(fields[3], "/")
	if !ok {
		return 0, 0, fmt.Errorf("error parsing fourth field of %s/loadavg", h.proc())
	}
	n, err := strconv.ParseInt(tasks, 10, 64)
	if err != nil {
		return 0, 0, err
	}
	return max - n, max, nil
}

type fsObservations struct{ bytes, inodes Observation }

func statfs(dir string, now time.Time) (fsObservations, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return fsObservations{}, err
	}
	bs := int64(st.Bsize) //nolint:unconvert // int32 on some platforms
	return fsObservations{
		bytes: Observation{
			Available: resource.NewQuantity(int64(st.Bavail)*bs, resource.BinarySI), //nolint:gosec // block counts fit
			Capacity:  resource.NewQuantity(int64(st.Blocks)*bs, resource.BinarySI), //nolint:gosec // block counts fit
			Time:      now,
		},
		inodes: Observation{
			Available: resource.NewQuantity(int64(st.Ffree), resource.DecimalSI), //nolint:gosec // inode counts fit
			Capacity:  resource.NewQuantity(int64(st.Files), resource.DecimalSI), //nolint:gosec // inode counts fit
			Time:      now,
		},
	}, nil
}

// DedicatedImageFs reports whether the imagefs is another file system than the nodefs, the
// kubelet's HasDedicatedImageFs: their devices differ.
func (h *Host) DedicatedImageFs(ctx context.Context) (bool, error) {
	if h.ImageFs == nil {
		return false, nil
	}
	dir, err := h.ImageFs(ctx)
	if err != nil || dir == "" {
		return false, err
	}
	var node, image syscall.Stat_t
	if err := syscall.Stat(h.RootDir, &node); err != nil {
		return false, err
	}
	if err := syscall.Stat(dir, &image); err != nil {
		return false, err
	}
	return node.Dev != image.Dev, nil
}
