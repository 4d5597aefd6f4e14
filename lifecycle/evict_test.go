package lifecycle

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/vk-static/vk-static/eviction"
)

// TestEvictionUnderDiskPressure: under nodefs pressure the dead containers of terminated pods
// are reclaimed first; that not being enough, the pod using the most disk (its emptyDir) is
// evicted — stopped with the hard threshold's grace, Failed with reason Evicted and the
// kubelet's message, a DisruptionTarget condition and a Warning event, its emptyDir removed —
// and the other keeps running. It is never started again, an agent restart included.
func TestEvictionUnderDiskPressure(t *testing.T) {
	thresholds, err := eviction.ParseThresholdConfig(map[string]string{"nodefs.available": "1Gi"}, nil, nil, nil)
	require.NoError(t, err)
	var available atomic.Int64
	available.Store(5 << 30)
	measure := func(context.Context) (eviction.Observations, error) {
		a, c := resource.NewQuantity(available.Load(), resource.BinarySI), resource.MustParse("10Gi")
		return eviction.Observations{eviction.SignalNodeFsAvailable: {Available: a, Capacity: &c}}, nil
	}
	h := &harness{t: t, clock: clocktesting.NewFakeClock(time.Date(2026, 11, 25, 7, 0, 0, 0, time.UTC)), root: t.TempDir(),
		events: record.NewFakeRecorder(1000)}
	h.rt = newFakeRuntime(h.clock)
	h.runtime = h.rt
	h.configure = func(cfg *Config) {
		cfg.Eviction = &eviction.Config{Thresholds: thresholds, Measure: measure}
		cfg.NodeName = "node-a"
	}
	h.start()
	ctx := context.Background()

	scratch := []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	filler := testPod("filler", corev1.RestartPolicyAlways, ctr("fill", "fill"))
	quiet := testPod("quiet", corev1.RestartPolicyAlways, ctr("sleeper", "sleep"))
	done := testPod("done", corev1.RestartPolicyNever, ctr("once", "true"))
	filler.Spec.Volumes, quiet.Spec.Volumes = scratch, scratch
	for _, pod := range []*corev1.Pod{filler, quiet, done} {
		require.NoError(t, h.p.CreatePod(ctx, pod))
	}
	// done's container too: exit of one not yet running would do nothing.
	for _, pod := range []*corev1.Pod{filler, quiet, done} {
		h.eventually(pod.UID, "running", func(s *corev1.PodStatus) bool { return mainState(s, 0).Running != nil })
	}
	h.rt.exit(h.rt.running("once"), 0)
	h.eventually(done.UID, "succeeded", func(s *corev1.PodStatus) bool { return s.Phase == corev1.PodSucceeded })
	dir := h.volumePath(filler.UID, "scratch")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "data"), make([]byte, 1<<20), 0o600))
	logs := filepath.Join(h.root, "logs", "pods", "default_p-"+string(filler.UID)+"_"+string(filler.UID), "fill")
	require.NoError(t, os.MkdirAll(logs, 0o750))
	require.NoError(t, os.WriteFile(filepath.Join(logs, "0.log"), make([]byte, 64<<10), 0o600))
	doneLogs := filepath.Join(h.p.podLogDir(done), "once")
	require.NoError(t, os.MkdirAll(doneLogs, 0o750))
	require.NoError(t, os.WriteFile(filepath.Join(doneLogs, "0.log"), []byte("done\n"), 0o600))

	available.Store(500 << 20)
	evicted := h.p.eviction.Synchronize(ctx)
	require.Len(t, evicted, 1, "one pod per pass")
	assert.Equal(t, filler.UID, evicted[0].UID, "the pod using the most disk")
	h.rt.mu.Lock()
	for _, c := range h.rt.containers {
		assert.NotEqual(t, "once", c.cfg.Name, "the terminated pod's container is reclaimed first")
	}
	h.rt.mu.Unlock()
	assert.NoDirExists(t, doneLogs, "with its logs")
	assert.Equal(t, corev1.PodSucceeded, h.status(done.UID).Phase, "its status kept")

	h.eventually(filler.UID, "evicted", func(s *corev1.PodStatus) bool {
		return s.Phase == corev1.PodFailed && s.Reason == "Evicted" && mainState(s, 0).Terminated != nil
	})
	s := h.status(filler.UID)
	assert.True(t, strings.HasPrefix(s.Message, "The node was low on resource: ephemeral-storage. Threshold quantity: 1Gi, available: 500Mi. Container fill was using "), s.Message)
	assert.True(t, hasTrue(s, corev1.DisruptionTarget), "DisruptionTarget")
	assert.Contains(t, h.rt.calls(), "stop fill#0 grace=2s", "a hard threshold: the kubelet's immediate 1 s, raised to its minimum of 2 s")
	assert.NoDirExists(t, dir, "the evicted pod's emptyDir is removed")
	var evictedEvents []string
	events := h.drainEvents()
	for _, e := range events {
		if strings.HasPrefix(e, "Warning Evicted ") {
			evictedEvents = append(evictedEvents, e)
		}
	}
	assert.Equal(t, []string{"Warning Evicted " + s.Message}, evictedEvents)
	assert.Contains(t, events, "Warning EvictionThresholdMet Attempting to reclaim ephemeral-storage", "the node's event")
	assert.NotNil(t, mainState(h.status(quiet.UID), 0).Running, "the other pod keeps running")

	// Never started again: not on later syncs, not by a restarted agent.
	available.Store(5 << 30)
	h.stop()
	h.start()
	h.eventually(filler.UID, "still evicted", func(s *corev1.PodStatus) bool { return s.Phase == corev1.PodFailed && s.Reason == "Evicted" })
	for _, c := range h.rt.calls() {
		assert.NotEqual(t, "start fill#1", c, "an evicted pod is not restarted")
	}
}

// volumePath is where the pod's volume name is on the host.
func (h *harness) volumePath(uid types.UID, name string) string {
	h.t.Helper()
	var path string
	require.Eventually(h.t, func() bool {
		h.p.mu.Lock()
		defer h.p.mu.Unlock()
		path = h.p.pods[uid].volumes[name]
		return path != ""
	}, 10*time.Second, 5*time.Millisecond)
	return path
}
