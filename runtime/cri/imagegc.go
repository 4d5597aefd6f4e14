package cri

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"golang.org/x/sys/unix"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/lifecycle"
)

// imageGCPeriod is how often the kubelet's image garbage collector runs.
const imageGCPeriod = 5 * time.Minute

// ImageGC removes unused images when the image filesystem fills, as the kubelet's image
// garbage collector: every 5 minutes and once at start, when usage is at or above the high
// threshold, images no container uses (running or not) are removed, least recently used first,
// until usage is down to the low threshold. A pinned image, the runtime's sandbox image and an
// image first seen less than Config.ImageMinimumGCAge ago are never removed: at start every
// image is new, so a full disk does not cost the images that pods are about to use.
type ImageGC struct {
	r *Runtime
	// capacity returns the size and free bytes of the filesystem mounted at a mountpoint.
	capacity func(mountpoint string) (capacity, available uint64, err error)
}

// imageRecords are when each image was first seen and last seen in use, by image ID.
type imageRecords struct {
	mu   sync.Mutex
	byID map[string]*imageRecord
}

type imageRecord struct {
	firstDetected, lastUsed time.Time
	size                    uint64
}

// ImageGC is the runtime's image garbage collector; nil when Config's thresholds disable it
// (high 100, or both 0).
func (r *Runtime) ImageGC() *ImageGC {
	high := r.cfg.ImageGCHighThreshold
	if high >= 100 || (high == 0 && r.cfg.ImageGCLowThreshold == 0) {
		return nil
	}
	return &ImageGC{r: r, capacity: statfs}
}

// Run collects at once and then every 5 minutes until ctx ends; failures are logged.
func (gc *ImageGC) Run(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	ticker := gc.r.cfg.Clock.NewTicker(imageGCPeriod)
	defer ticker.Stop()
	for {
		if freed, err := gc.Collect(ctx); err != nil && ctx.Err() == nil {
			logger.Error(err, "Image garbage collection failed")
		} else if freed > 0 {
			logger.Info("Image garbage collection freed space", "bytes", freed)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C():
		}
	}
}

// Collect runs one collection and returns the bytes freed.
func (gc *ImageGC) Collect(ctx context.Context) (uint64, error) {
	images, err := gc.detect(ctx)
	if err != nil {
		return 0, err
	}
	fs, err := gc.r.is.ImageFsInfo(ctx)
	if err != nil {
		return 0, fmt.Errorf("image filesystem info: %w", err)
	}
	if len(fs.GetImageFilesystems()) == 0 {
		return 0, fmt.Errorf("image filesystem info: the runtime reports no image filesystem")
	}
	mountpoint := fs.GetImageFilesystems()[0].GetFsId().GetMountpoint()
	capacity, available, err := gc.capacity(mountpoint)
	if err != nil {
		return 0, fmt.Errorf("image filesystem %s: %w", mountpoint, err)
	}
	if capacity == 0 {
		return 0, nil
	}
	usage := 100 - int(available*100/capacity)
	if usage < gc.r.cfg.ImageGCHighThreshold {
		return 0, nil
	}
	target := capacity*uint64(100-gc.r.cfg.ImageGCLowThreshold)/100 - min(available, capacity*uint64(100-gc.r.cfg.ImageGCLowThreshold)/100)
	klog.FromContext(ctx).Info("Image filesystem above the high threshold: removing unused images", "usagePercent", usage,
		"highThresholdPercent", gc.r.cfg.ImageGCHighThreshold, "lowThresholdPercent", gc.r.cfg.ImageGCLowThreshold, "bytesToFree", target)
	return gc.free(ctx, images, target)
}

// detect lists images and the containers' images, records what it sees, and returns the
// removable images' IDs, least recently used first.
func (gc *ImageGC) detect(ctx context.Context) ([]string, error) {
	now := gc.r.cfg.Clock.Now()
	images, err := gc.r.is.ListImages(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("list images: %w", err)
	}
	// Every container counts, ours or not, running or not: its image cannot be removed.
	containers, err := gc.r.rs.ListContainers(ctx, &runtimeapi.ContainerFilter{})
	if err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	inUse := map[string]bool{}
	for _, c := range containers {
		inUse[c.GetImageRef()] = true
		inUse[c.GetImage().GetImage()] = true
	}
	sandboxImage := gc.sandboxImage(ctx)
	records := &gc.r.images
	records.mu.Lock()
	defer records.mu.Unlock()
	var removable []string
	seen := map[string]bool{}
	for _, img := range images {
		id := img.GetId()
		seen[id] = true
		rec := records.byID[id]
		if rec == nil {
			rec = &imageRecord{firstDetected: now}
			records.byID[id] = rec
		}
		rec.size = img.GetSize()
		used := inUse[id]
		for _, tag := range img.GetRepoTags() {
			used = used || inUse[tag] || tag == sandboxImage
		}
		for _, digest := range img.GetRepoDigests() {
			used = used || inUse[digest]
		}
		if used {
			rec.lastUsed = now
			continue
		}
		if img.GetPinned() || now.Sub(rec.firstDetected) < gc.r.cfg.ImageMinimumGCAge {
			continue
		}
		removable = append(removable, id)
	}
	for id := range records.byID {
		if !seen[id] {
			delete(records.byID, id)
		}
	}
	sort.SliceStable(removable, func(i, j int) bool {
		a, b := records.byID[removable[i]], records.byID[removable[j]]
		if !a.lastUsed.Equal(b.lastUsed) {
			return a.lastUsed.Before(b.lastUsed)
		}
		return a.firstDetected.Before(b.firstDetected)
	})
	return removable, nil
}

// free removes images in order until target bytes are freed.
func (gc *ImageGC) free(ctx context.Context, ids []string, target uint64) (uint64, error) {
	var freed uint64
	for _, id := range ids {
		if freed >= target {
			break
		}
		if err := gc.r.is.RemoveImage(ctx, &runtimeapi.ImageSpec{Image: id}); err != nil {
			klog.FromContext(ctx).Error(err, "Removing an unused image failed", "image", id)
			continue
		}
		freed += gc.r.images.remove(id)
	}
	if freed < target {
		return freed, fmt.Errorf("freed %d bytes of the %d wanted: no more unused images", freed, target)
	}
	return freed, nil
}

// remove forgets the image id and returns its size.
func (records *imageRecords) remove(id string) uint64 {
	records.mu.Lock()
	defer records.mu.Unlock()
	var size uint64
	if rec := records.byID[id]; rec != nil {
		size = rec.size
	}
	delete(records.byID, id)
	return size
}

// sandboxImage is the runtime's sandbox (pause) image as its verbose status reports it
// (containerd: config.sandboxImage); "" when it does not.
func (gc *ImageGC) sandboxImage(ctx context.Context) string {
	st, err := gc.r.rs.Status(ctx, true)
	if err != nil {
		return ""
	}
	var config struct {
		SandboxImage string `json:"sandboxImage"`
	}
	if err := json.Unmarshal([]byte(st.GetInfo()["config"]), &config); err != nil {
		return ""
	}
	return config.SandboxImage
}

func statfs(mountpoint string) (capacity, available uint64, err error) {
	var st unix.Statfs_t
	if err := unix.Statfs(mountpoint, &st); err != nil {
		return 0, 0, err
	}
	return st.Blocks * uint64(st.Bsize), st.Bavail * uint64(st.Bsize), nil
}

// DeleteUnusedImages removes every image no container uses (pinned, sandbox and images newer
// than Config.ImageMinimumGCAge excepted), whatever the thresholds: the kubelet's reclaim of an
// image filesystem under disk pressure, before it evicts pods (lifecycle.ImageReclaimer). It
// shares the periodic collection's records, under their lock, so it may run beside it.
func (r *Runtime) DeleteUnusedImages(ctx context.Context) error {
	gc := &ImageGC{r: r, capacity: statfs}
	ids, err := gc.detect(ctx)
	if err != nil {
		return err
	}
	freed, _ := gc.free(ctx, ids, math.MaxUint64) // short of "everything" by design
	if freed > 0 {
		klog.FromContext(ctx).Info("Removed unused images to reclaim disk", "images", len(ids), "bytes", freed)
	}
	return nil
}

var _ lifecycle.ImageReclaimer = (*Runtime)(nil)
