package eviction

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	testingclock "k8s.io/utils/clock/testing"
)

func TestParseThresholdConfig(t *testing.T) {
	th, err := ParseThresholdConfig(DefaultEvictionHard, nil, nil, nil)
	require.NoError(t, err)
	var got []string
	for _, x := range th {
		got = append(got, x.String())
	}
	assert.Equal(t, []string{"imagefs.available<15%", "imagefs.inodesFree<5%", "memory.available<100Mi", "nodefs.available<10%", "nodefs.inodesFree<5%"}, got)

	th, err = ParseThresholdConfig(map[string]string{"memory.available": "0%", "nodefs.available": "1Gi"},
		map[string]string{"memory.available": "500Mi"}, map[string]string{"memory.available": "1m30s"},
		map[string]string{"nodefs.available": "500Mi"})
	require.NoError(t, err)
	require.Len(t, th, 2, "0%% turns a signal off")
	assert.Equal(t, "nodefs.available<1Gi", th[0].String())
	assert.Equal(t, "500Mi", th[0].MinReclaim.Quantity.String())
	assert.Equal(t, 90*time.Second, th[1].GracePeriod)

	for _, c := range []struct {
		hard, soft, grace map[string]string
		want              string
	}{
		{hard: map[string]string{"memory.free": "1Gi"}, want: "unsupported eviction signal memory.free"},
		{hard: map[string]string{"memory.available": "-1Gi"}, want: "eviction threshold memory.available must be positive: -1Gi"},
		{hard: map[string]string{"nodefs.available": "120%"}, want: "eviction percentage threshold nodefs.available must be <= 100%: 120%"},
		{soft: map[string]string{"memory.available": "1Gi"}, want: "grace period must be specified for the soft eviction threshold memory.available"},
		{soft: map[string]string{"memory.available": "1Gi"}, grace: map[string]string{"memory.available": "-1s"}, want: "invalid eviction grace period specified: -1s, must be a positive value"},
	} {
		_, err := ParseThresholdConfig(c.hard, c.soft, c.grace, nil)
		assert.EqualError(t, err, c.want)
	}
}

// fakeNode is the measurements a test sets.
type fakeNode struct {
	mu  sync.Mutex
	obs Observations
}

func (f *fakeNode) set(s Signal, available, capacity string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.obs == nil {
		f.obs = Observations{}
	}
	a, c := resource.MustParse(available), resource.MustParse(capacity)
	f.obs[s] = Observation{Available: &a, Capacity: &c}
}

func (f *fakeNode) measure(context.Context) (Observations, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := Observations{}
	for k, v := range f.obs {
		out[k] = v
	}
	return out, nil
}

func status(conds []corev1.NodeCondition, t corev1.NodeConditionType) string {
	for _, c := range conds {
		if c.Type == t {
			return string(c.Status) + " " + c.Reason
		}
	}
	return "none"
}

// TestPressureAsTheKubelet: a hard threshold sets its condition at once and is acted on; a
// condition stays True for the transition period after its threshold stops being met; a soft
// threshold's condition is True at once but its threshold is acted on only after its grace
// period; the minimum reclaim keeps a threshold met until that much more is available.
func TestPressureAsTheKubelet(t *testing.T) {
	ctx := context.Background()
	clk := testingclock.NewFakeClock(time.Unix(1000, 0))
	th, err := ParseThresholdConfig(
		map[string]string{"nodefs.available": "10%", "pid.available": "100"},
		map[string]string{"memory.available": "1Gi"}, map[string]string{"memory.available": "1m"},
		map[string]string{"nodefs.available": "1Gi"})
	require.NoError(t, err)
	node := &fakeNode{}
	node.set(SignalNodeFsAvailable, "5Gi", "10Gi")
	node.set(SignalMemoryAvailable, "4Gi", "8Gi")
	node.set(SignalPIDAvailable, "30000", "32768")
	m := NewManager(Config{Thresholds: th, Measure: node.measure, Clock: clk, PressureTransitionPeriod: time.Minute})
	var mu sync.Mutex
	var reports [][]corev1.NodeCondition
	m.NotifyNodeStatus(ctx, func(n *corev1.Node) {
		mu.Lock()
		defer mu.Unlock()
		reports = append(reports, n.Status.Conditions)
	})
	last := func() []corev1.NodeCondition { mu.Lock(); defer mu.Unlock(); return reports[len(reports)-1] }
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(reports) }

	m.Synchronize(ctx)
	assert.Equal(t, "False KubeletHasNoDiskPressure", status(last(), corev1.NodeDiskPressure))
	assert.Equal(t, "False KubeletHasSufficientMemory", status(last(), corev1.NodeMemoryPressure))
	assert.Equal(t, "False KubeletHasSufficientPID", status(last(), corev1.NodePIDPressure))
	assert.Equal(t, 1, count(), "nothing changed: nothing reported again")

	// nodefs below 10%: DiskPressure at once, the threshold acted on.
	node.set(SignalNodeFsAvailable, "900Mi", "10Gi")
	clk.Step(10 * time.Second)
	m.Synchronize(ctx)
	assert.Equal(t, "True KubeletHasDiskPressure", status(last(), corev1.NodeDiskPressure))
	assert.True(t, m.IsUnderDiskPressure())
	met, _ := m.Met()
	require.Len(t, met, 1)
	assert.Equal(t, "nodefs.available<10%", met[0].String())

	// Just above 10% but not above 10% + 1Gi of minimum reclaim: still met.
	node.set(SignalNodeFsAvailable, "1100Mi", "10Gi")
	clk.Step(10 * time.Second)
	m.Synchronize(ctx)
	met, _ = m.Met()
	assert.Len(t, met, 1, "met until the minimum reclaim is reclaimed")

	// Reclaimed: no longer met, but the condition holds for the transition period.
	node.set(SignalNodeFsAvailable, "3Gi", "10Gi")
	clk.Step(10 * time.Second)
	m.Synchronize(ctx)
	met, _ = m.Met()
	assert.Empty(t, met)
	assert.Equal(t, "True KubeletHasDiskPressure", status(last(), corev1.NodeDiskPressure), "within the transition period")
	clk.Step(40 * time.Second)
	m.Synchronize(ctx)
	assert.Equal(t, "True KubeletHasDiskPressure", status(last(), corev1.NodeDiskPressure), "50 s after the threshold was last met")
	clk.Step(10 * time.Second)
	m.Synchronize(ctx)
	assert.Equal(t, "False KubeletHasNoDiskPressure", status(last(), corev1.NodeDiskPressure), "the transition period has passed")

	// Soft memory threshold: the condition at once, eviction only after its grace period.
	node.set(SignalMemoryAvailable, "512Mi", "8Gi")
	clk.Step(10 * time.Second)
	m.Synchronize(ctx)
	assert.Equal(t, "True KubeletHasInsufficientMemory", status(last(), corev1.NodeMemoryPressure))
	assert.True(t, m.IsUnderMemoryPressure())
	met, _ = m.Met()
	assert.Empty(t, met, "the grace period has not passed")
	clk.Step(time.Minute)
	m.Synchronize(ctx)
	met, _ = m.Met()
	require.Len(t, met, 1)
	assert.Equal(t, "memory.available<1Gi", met[0].String())

	// PIDs.
	node.set(SignalPIDAvailable, "50", "32768")
	clk.Step(10 * time.Second)
	m.Synchronize(ctx)
	assert.Equal(t, "True KubeletHasInsufficientPID", status(last(), corev1.NodePIDPressure))
}

// TestUnmeasuredSignalMeetsNothing: a signal the node cannot measure is no pressure.
func TestUnmeasuredSignalMeetsNothing(t *testing.T) {
	th, err := ParseThresholdConfig(DefaultEvictionHard, nil, nil, nil)
	require.NoError(t, err)
	m := NewManager(Config{Thresholds: th, Measure: (&fakeNode{}).measure, Clock: testingclock.NewFakeClock(time.Unix(0, 0))})
	m.Synchronize(context.Background())
	assert.Empty(t, m.Conditions())
}

func TestHostMeasures(t *testing.T) {
	obs, err := (&Host{RootDir: t.TempDir()}).Measure(context.Background())
	require.NoError(t, err)
	for _, s := range []Signal{SignalMemoryAvailable, SignalNodeFsAvailable, SignalNodeFsInodesFree, SignalImageFsAvailable, SignalImageFsInodesFree, SignalPIDAvailable} {
		o, ok := obs[s]
		if assert.True(t, ok, "%s measured", s) {
			assert.Positive(t, o.Capacity.Value(), s)
			assert.LessOrEqual(t, o.Available.Value(), o.Capacity.Value(), s)
		}
	}
	assert.Equal(t, obs[SignalNodeFsAvailable].Capacity.Value(), obs[SignalImageFsAvailable].Capacity.Value(), "no image filesystem: the nodefs")
}

// TestHostDedicatedImageFs: the imagefs is dedicated when it is another device than the nodefs.
func TestHostDedicatedImageFs(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	for dir, want := range map[string]bool{"": false, t.TempDir(): false, "/proc": true} {
		h := &Host{RootDir: root, ImageFs: func(context.Context) (string, error) { return dir, nil }}
		got, err := h.DedicatedImageFs(ctx)
		require.NoError(t, err)
		assert.Equal(t, want, got, "imagefs %q", dir)
	}
	got, err := (&Host{RootDir: root}).DedicatedImageFs(ctx)
	require.NoError(t, err)
	assert.False(t, got, "no imagefs of its own")
}
