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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

// fakePods are the pods and their usage a test sets, and what was evicted and reclaimed.
type fakePods struct {
	mu       sync.Mutex
	pods     []*corev1.Pod
	stats    map[types.UID]statsv1alpha1.PodStats
	evicted  []evicted
	reclaims []string
	// reclaim, when set, is what a node-level reclaim does to the node.
	reclaim func(kind string)
}

type evicted struct {
	name    string
	grace   time.Duration
	message string
}

func (f *fakePods) active() []*corev1.Pod {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*corev1.Pod(nil), f.pods...)
}

func (f *fakePods) podStats(context.Context) ([]statsv1alpha1.PodStats, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []statsv1alpha1.PodStats
	for _, s := range f.stats {
		out = append(out, s)
	}
	return out, nil
}

func (f *fakePods) evict(_ context.Context, pod *corev1.Pod, grace time.Duration, message string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.evicted = append(f.evicted, evicted{pod.Name, grace, message})
	return nil
}

func (f *fakePods) reclaimer(kind string) func(context.Context) error {
	return func(context.Context) error {
		f.mu.Lock()
		f.reclaims = append(f.reclaims, kind)
		r := f.reclaim
		f.mu.Unlock()
		if r != nil {
			r(kind)
		}
		return nil
	}
}

// take returns what was evicted since the last take.
func (f *fakePods) take() []evicted {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.evicted
	f.evicted = nil
	return out
}

// podSpec is a pod of one container "c" with its requests, and its priority.
func podSpec(name string, prio int32, requests corev1.ResourceList) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name + "-uid")},
		Spec: corev1.PodSpec{
			Priority:   &prio,
			Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: requests}}},
		},
	}
}

func memoryStats(pod *corev1.Pod, workingSet string) statsv1alpha1.PodStats {
	ws := bytesOf(workingSet)
	return statsv1alpha1.PodStats{
		PodRef:     statsv1alpha1.PodReference{Name: pod.Name, Namespace: pod.Namespace, UID: string(pod.UID)},
		Memory:     &statsv1alpha1.MemoryStats{WorkingSetBytes: &ws},
		Containers: []statsv1alpha1.ContainerStats{{Name: "c", Memory: &statsv1alpha1.MemoryStats{WorkingSetBytes: &ws}}},
	}
}

// diskStats is a pod's usage of its writable layer, logs and emptyDir volume "scratch".
func diskStats(pod *corev1.Pod, rootfs, logs, volume string) statsv1alpha1.PodStats {
	q := func(s string) *uint64 { v := bytesOf(s); return &v }
	return statsv1alpha1.PodStats{
		PodRef: statsv1alpha1.PodReference{Name: pod.Name, Namespace: pod.Namespace, UID: string(pod.UID)},
		Containers: []statsv1alpha1.ContainerStats{{Name: "c",
			Rootfs: &statsv1alpha1.FsStats{UsedBytes: q(rootfs)}, Logs: &statsv1alpha1.FsStats{UsedBytes: q(logs)}}},
		VolumeStats: []statsv1alpha1.VolumeStats{{Name: "scratch", FsStats: statsv1alpha1.FsStats{UsedBytes: q(volume)}}},
	}
}

func withScratch(pod *corev1.Pod) *corev1.Pod {
	pod.Spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	return pod
}

func mem(s string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(s)}
}

// TestMemoryPressure, the kubelet's: a soft threshold evicts only after its grace period, with
// the pod's grace period capped by the maximum; a hard one at once with grace 0; one pod per
// pass, ranked by usage above requests, then priority, then usage above requests; a critical
// pod is never evicted; after the pressure the condition holds for the transition period.
func TestMemoryPressure(t *testing.T) {
	ctx := context.Background()
	clk := testingclock.NewFakeClock(time.Unix(1000, 0))
	th, err := ParseThresholdConfig(map[string]string{"memory.available": "1Gi"},
		map[string]string{"memory.available": "2Gi"}, map[string]string{"memory.available": "2m"}, nil)
	require.NoError(t, err)

	bestEffort := podSpec("best-effort", 0, nil)
	burstable := podSpec("burstable", 0, mem("100Mi"))
	guaranteed := podSpec("guaranteed", 0, mem("1Gi"))
	static := podSpec("static", 0, nil)
	static.Annotations = map[string]string{"kubernetes.io/config.source": "file"}
	burstable.Spec.TerminationGracePeriodSeconds = ptr.To[int64](3)
	pods := &fakePods{
		pods: []*corev1.Pod{guaranteed, burstable, bestEffort, static},
		stats: map[types.UID]statsv1alpha1.PodStats{
			bestEffort.UID: memoryStats(bestEffort, "500Mi"),
			burstable.UID:  memoryStats(burstable, "400Mi"),
			guaranteed.UID: memoryStats(guaranteed, "800Mi"),
			static.UID:     memoryStats(static, "3Gi"),
		},
	}
	node := &fakeNode{}
	node.set(SignalMemoryAvailable, "3Gi", "10Gi")
	m := NewManager(Config{Thresholds: th, Measure: node.measure, Clock: clk, PressureTransitionPeriod: 5 * time.Minute,
		ActivePods: pods.active, PodStats: pods.podStats, EvictPod: pods.evict, MaxPodGracePeriod: 5 * time.Second})

	assert.Nil(t, m.Synchronize(ctx), "no pressure")
	assert.False(t, m.IsUnderMemoryPressure())

	// Below the soft threshold: pressure at once, no eviction before the grace period.
	node.set(SignalMemoryAvailable, "1500Mi", "10Gi")
	assert.Nil(t, m.Synchronize(ctx))
	assert.True(t, m.IsUnderMemoryPressure())
	clk.Step(time.Minute)
	assert.Nil(t, m.Synchronize(ctx), "the soft grace period has not passed")
	clk.Step(time.Minute)
	got := m.Synchronize(ctx)
	require.NotNil(t, got)
	ev := pods.take()
	require.Len(t, ev, 1, "one pod per pass")
	// best-effort and burstable exceed their requests, guaranteed does not; at equal
	// priority, best-effort is 500Mi above its request and burstable 300Mi; the static pod,
	// the largest, is critical.
	assert.Equal(t, "best-effort", ev[0].name)
	assert.Equal(t, 5*time.Second, ev[0].grace, "a soft threshold: the maximum grace period")
	assert.Equal(t, "The node was low on resource: memory. Threshold quantity: 2Gi, available: 1500Mi. "+
		"Container c was using 500Mi, request is 0, has larger consumption of memory. ", ev[0].message)

	pods.pods = []*corev1.Pod{guaranteed, burstable, static}
	clk.Step(10 * time.Second)
	require.NotNil(t, m.Synchronize(ctx))
	ev = pods.take()
	require.Len(t, ev, 1)
	assert.Equal(t, "burstable", ev[0].name)
	assert.Equal(t, 3*time.Second, ev[0].grace, "the pod's own grace period, below the maximum")

	// Relieved, then below the hard threshold: at once, with the kubelet's immediate grace
	// period (the soft threshold is met again, but not for its grace period).
	pods.pods = []*corev1.Pod{guaranteed, static}
	node.set(SignalMemoryAvailable, "3Gi", "10Gi")
	clk.Step(10 * time.Second)
	assert.Nil(t, m.Synchronize(ctx))
	node.set(SignalMemoryAvailable, "500Mi", "10Gi")
	clk.Step(10 * time.Second)
	require.NotNil(t, m.Synchronize(ctx))
	ev = pods.take()
	require.Len(t, ev, 1)
	assert.Equal(t, "guaranteed", ev[0].name)
	assert.Equal(t, time.Second, ev[0].grace, "a hard threshold: the kubelet's immediate 1 s")
	assert.Equal(t, "The node was low on resource: memory. Threshold quantity: 1Gi, available: 500Mi. ", ev[0].message,
		"no container above its request")

	// Only the critical pod is left: nothing is evicted.
	pods.pods = []*corev1.Pod{static}
	clk.Step(10 * time.Second)
	assert.Nil(t, m.Synchronize(ctx))
	assert.Empty(t, pods.take(), "a static pod is never evicted")

	// Relieved: no eviction; the condition holds for the transition period.
	node.set(SignalMemoryAvailable, "3Gi", "10Gi")
	clk.Step(10 * time.Second)
	assert.Nil(t, m.Synchronize(ctx))
	assert.True(t, m.IsUnderMemoryPressure())
	clk.Step(5 * time.Minute)
	assert.Nil(t, m.Synchronize(ctx))
	assert.False(t, m.IsUnderMemoryPressure())
	assert.Empty(t, pods.take())
}

// TestDiskPressureNodeFs, the kubelet's: on a node without a dedicated imagefs, nodefs
// pressure first reclaims dead containers and unused images; what they free decides whether a
// pod is evicted, ranked by its disk usage (writable layers, logs, local volumes) above its
// ephemeral-storage request.
func TestDiskPressureNodeFs(t *testing.T) {
	ctx := context.Background()
	clk := testingclock.NewFakeClock(time.Unix(1000, 0))
	th, err := ParseThresholdConfig(map[string]string{"nodefs.available": "1Gi"}, nil, nil, nil)
	require.NoError(t, err)
	small := withScratch(podSpec("small", 0, nil))
	large := withScratch(podSpec("large", 0, nil))
	requested := withScratch(podSpec("requested", 0, corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse("2Gi")}))
	pods := &fakePods{
		pods: []*corev1.Pod{small, requested, large},
		stats: map[types.UID]statsv1alpha1.PodStats{
			small.UID:     diskStats(small, "0", "10Mi", "100Mi"),
			large.UID:     diskStats(large, "0", "10Mi", "600Mi"),
			requested.UID: diskStats(requested, "0", "0", "1500Mi"),
		},
	}
	node := &fakeNode{}
	node.set(SignalNodeFsAvailable, "4Gi", "10Gi")
	m := NewManager(Config{Thresholds: th, Measure: node.measure, Clock: clk,
		ActivePods: pods.active, PodStats: pods.podStats, EvictPod: pods.evict,
		ReclaimContainers: pods.reclaimer("containers"), ReclaimImages: pods.reclaimer("images")})
	assert.Nil(t, m.Synchronize(ctx))
	assert.Empty(t, pods.reclaims)

	// Pressure; the reclaim frees enough: no eviction.
	node.set(SignalNodeFsAvailable, "500Mi", "10Gi")
	pods.reclaim = func(kind string) {
		if kind == "images" {
			node.set(SignalNodeFsAvailable, "2Gi", "10Gi")
		}
	}
	clk.Step(10 * time.Second)
	assert.Nil(t, m.Synchronize(ctx))
	assert.Equal(t, []string{"containers", "images"}, pods.reclaims, "dead containers first, then images")
	assert.Empty(t, pods.take())
	assert.True(t, m.IsUnderDiskPressure(), "the condition was observed")

	// Pressure; the reclaim frees nothing: the pod using the most above its request goes.
	pods.reclaims, pods.reclaim = nil, nil
	node.set(SignalNodeFsAvailable, "500Mi", "10Gi")
	clk.Step(10 * time.Second)
	require.NotNil(t, m.Synchronize(ctx))
	assert.Equal(t, []string{"containers", "images"}, pods.reclaims)
	ev := pods.take()
	require.Len(t, ev, 1)
	// requested uses the most but within its request; large is 620Mi above none.
	assert.Equal(t, "large", ev[0].name)
	assert.Equal(t, "The node was low on resource: ephemeral-storage. Threshold quantity: 1Gi, available: 500Mi. "+
		"Container c was using 10Mi, request is 0, has larger consumption of ephemeral-storage. ", ev[0].message)
}

// TestDiskPressureDedicatedImageFs: with an imagefs of its own, nodefs pressure reclaims
// nothing at node level (images are not on it) and ranks by logs and local volumes only;
// imagefs pressure reclaims, and ranks by the writable layers.
func TestDiskPressureDedicatedImageFs(t *testing.T) {
	ctx := context.Background()
	clk := testingclock.NewFakeClock(time.Unix(1000, 0))
	th, err := ParseThresholdConfig(map[string]string{"nodefs.available": "1Gi", "imagefs.available": "1Gi"}, nil, nil, nil)
	require.NoError(t, err)
	layers := withScratch(podSpec("layers", 0, nil))
	volume := withScratch(podSpec("volume", 0, nil))
	pods := &fakePods{
		pods: []*corev1.Pod{layers, volume},
		stats: map[types.UID]statsv1alpha1.PodStats{
			layers.UID: diskStats(layers, "900Mi", "0", "0"),
			volume.UID: diskStats(volume, "0", "0", "300Mi"),
		},
	}
	node := &fakeNode{}
	node.set(SignalNodeFsAvailable, "500Mi", "10Gi")
	node.set(SignalImageFsAvailable, "4Gi", "10Gi")
	m := NewManager(Config{Thresholds: th, Measure: node.measure, Clock: clk,
		ActivePods: pods.active, PodStats: pods.podStats, EvictPod: pods.evict,
		ReclaimContainers: pods.reclaimer("containers"), ReclaimImages: pods.reclaimer("images"),
		DedicatedImageFs: func(context.Context) (bool, error) { return true, nil }})
	require.NotNil(t, m.Synchronize(ctx))
	assert.Empty(t, pods.reclaims, "nothing to reclaim at node level for the nodefs")
	ev := pods.take()
	require.Len(t, ev, 1)
	assert.Equal(t, "volume", ev[0].name, "the writable layer is on the imagefs")

	node.set(SignalNodeFsAvailable, "4Gi", "10Gi")
	node.set(SignalImageFsAvailable, "500Mi", "10Gi")
	clk.Step(10 * time.Second)
	require.NotNil(t, m.Synchronize(ctx))
	assert.Equal(t, []string{"containers", "images"}, pods.reclaims)
	ev = pods.take()
	require.Len(t, ev, 1)
	assert.Equal(t, "layers", ev[0].name)
}

// TestMinReclaim, the kubelet's: once met, a threshold keeps evicting until its minimum reclaim
// is available above it, and node-level reclaim counts only if it frees that much.
func TestMinReclaim(t *testing.T) {
	ctx := context.Background()
	clk := testingclock.NewFakeClock(time.Unix(1000, 0))
	th, err := ParseThresholdConfig(map[string]string{"memory.available": "1Gi"}, nil, nil, map[string]string{"memory.available": "500Mi"})
	require.NoError(t, err)
	a, b := podSpec("a", 0, nil), podSpec("b", 0, nil)
	pods := &fakePods{
		pods:  []*corev1.Pod{a, b},
		stats: map[types.UID]statsv1alpha1.PodStats{a.UID: memoryStats(a, "100Mi"), b.UID: memoryStats(b, "200Mi")},
	}
	node := &fakeNode{}
	node.set(SignalMemoryAvailable, "500Mi", "10Gi")
	m := NewManager(Config{Thresholds: th, Measure: node.measure, Clock: clk, ActivePods: pods.active, PodStats: pods.podStats, EvictPod: pods.evict})
	require.NotNil(t, m.Synchronize(ctx))
	assert.Equal(t, "b", pods.take()[0].name)

	// Above the threshold, below threshold + minimum reclaim: still evicting.
	node.set(SignalMemoryAvailable, "1200Mi", "10Gi")
	clk.Step(10 * time.Second)
	require.NotNil(t, m.Synchronize(ctx), "the minimum reclaim is not met")
	assert.Len(t, pods.take(), 1)

	// Above threshold + minimum reclaim: resolved.
	node.set(SignalMemoryAvailable, "2Gi", "10Gi")
	clk.Step(10 * time.Second)
	assert.Nil(t, m.Synchronize(ctx))
	assert.Empty(t, pods.take())
	assert.True(t, m.IsUnderMemoryPressure(), "within the transition period")
}

// TestNodeReclaimMinReclaim: a node-level reclaim that frees enough to end the threshold but
// not its minimum reclaim does not spare the pods.
func TestNodeReclaimMinReclaim(t *testing.T) {
	ctx := context.Background()
	clk := testingclock.NewFakeClock(time.Unix(1000, 0))
	th, err := ParseThresholdConfig(map[string]string{"nodefs.available": "1Gi"}, nil, nil, map[string]string{"nodefs.available": "500Mi"})
	require.NoError(t, err)
	p := withScratch(podSpec("p", 0, nil))
	pods := &fakePods{pods: []*corev1.Pod{p}, stats: map[types.UID]statsv1alpha1.PodStats{p.UID: diskStats(p, "0", "0", "1Gi")}}
	node := &fakeNode{}
	node.set(SignalNodeFsAvailable, "500Mi", "10Gi")
	pods.reclaim = func(string) { node.set(SignalNodeFsAvailable, "1200Mi", "10Gi") }
	m := NewManager(Config{Thresholds: th, Measure: node.measure, Clock: clk, ActivePods: pods.active, PodStats: pods.podStats,
		EvictPod: pods.evict, ReclaimImages: pods.reclaimer("images")})
	require.NotNil(t, m.Synchronize(ctx), "1200Mi is less than 1Gi + 500Mi")
	pods.reclaim = func(string) { node.set(SignalNodeFsAvailable, "2Gi", "10Gi") }
	node.set(SignalNodeFsAvailable, "500Mi", "10Gi")
	clk.Step(10 * time.Second)
	assert.Nil(t, m.Synchronize(ctx), "2Gi is enough")
}

// TestPIDPressure: ranked by priority, then process count.
func TestPIDPressure(t *testing.T) {
	ctx := context.Background()
	th, err := ParseThresholdConfig(map[string]string{"pid.available": "100"}, nil, nil, nil)
	require.NoError(t, err)
	few, many, important := podSpec("few", 0, nil), podSpec("many", 0, nil), podSpec("important", 1000, nil)
	procs := func(pod *corev1.Pod, n uint64) statsv1alpha1.PodStats {
		return statsv1alpha1.PodStats{PodRef: statsv1alpha1.PodReference{UID: string(pod.UID)}, ProcessStats: &statsv1alpha1.ProcessStats{ProcessCount: &n}}
	}
	pods := &fakePods{pods: []*corev1.Pod{important, few, many}, stats: map[types.UID]statsv1alpha1.PodStats{
		few.UID: procs(few, 3), many.UID: procs(many, 300), important.UID: procs(important, 3000)}}
	node := &fakeNode{}
	node.set(SignalPIDAvailable, "50", "32768")
	m := NewManager(Config{Thresholds: th, Measure: node.measure, Clock: testingclock.NewFakeClock(time.Unix(0, 0)),
		ActivePods: pods.active, PodStats: pods.podStats, EvictPod: pods.evict})
	require.NotNil(t, m.Synchronize(ctx))
	assert.Equal(t, "many", pods.take()[0].name)
}

// TestRankMemory, the kubelet's TestOrderedByExceedsRequestMemory and TestOrderedByPriority: a
// pod above its request before one below, then the lower priority, then the larger usage above
// request; a pod not measured first of all.
func TestRankMemory(t *testing.T) {
	below := podSpec("below", 0, mem("1Gi"))
	aboveHigh := podSpec("above-high", 100, mem("100Mi"))
	aboveLow := podSpec("above-low", -10, mem("100Mi"))
	aboveLowMore := podSpec("above-low-more", -10, mem("100Mi"))
	unmeasured := podSpec("unmeasured", 1000, mem("1Gi"))
	stats := statsByUID([]statsv1alpha1.PodStats{
		memoryStats(below, "900Mi"), memoryStats(aboveHigh, "2Gi"),
		memoryStats(aboveLow, "200Mi"), memoryStats(aboveLowMore, "300Mi"),
	})
	pods := []*corev1.Pod{below, aboveHigh, aboveLow, unmeasured, aboveLowMore}
	rankMemoryPressure(pods, stats)
	assert.Equal(t, []string{"unmeasured", "above-low-more", "above-low", "above-high", "below"}, names(pods))
}

// TestRankDisk, the kubelet's TestOrderedByDisk: emptyDir, logs and writable layer count; a
// volume that is not local does not.
func TestRankDisk(t *testing.T) {
	a, b, c := withScratch(podSpec("a", 0, nil)), withScratch(podSpec("b", 0, nil)), podSpec("c", 0, nil)
	c.Spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{}}}}
	stats := statsByUID([]statsv1alpha1.PodStats{diskStats(a, "10Mi", "10Mi", "10Mi"), diskStats(b, "0", "0", "50Mi"), diskStats(c, "0", "0", "1Gi")})
	pods := []*corev1.Pod{c, a, b}
	rankDiskPressure([]fsStatsType{fsStatsRoot, fsStatsLogs, fsStatsLocalVolumeSource}, corev1.ResourceEphemeralStorage)(pods, stats)
	assert.Equal(t, []string{"b", "a", "c"}, names(pods))
}

// TestPodRequest: the largest of the containers' sum and each init container with the
// sidecars before it, as the kubelet's resource helpers count.
func TestPodRequest(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	pod := podSpec("p", 0, mem("100Mi"))
	pod.Spec.InitContainers = []corev1.Container{
		{Name: "sidecar", RestartPolicy: &always, Resources: corev1.ResourceRequirements{Requests: mem("50Mi")}},
		{Name: "init", Resources: corev1.ResourceRequirements{Requests: mem("500Mi")}},
	}
	q := podRequest(pod, corev1.ResourceMemory)
	assert.Equal(t, "550Mi", q.String())
	pod.Spec.InitContainers[1].Resources.Requests = mem("10Mi")
	q = podRequest(pod, corev1.ResourceMemory)
	assert.Equal(t, "150Mi", q.String())
	pod.Spec.Resources = &corev1.ResourceRequirements{Requests: mem("1Gi")}
	q = podRequest(pod, corev1.ResourceMemory)
	assert.Equal(t, "1Gi", q.String(), "a pod-level request wins")
}

func names(pods []*corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

func bytesOf(s string) uint64 {
	q := resource.MustParse(s)
	return uint64(q.Value()) //nolint:gosec // test sizes
}

// TestLocalStorageEviction, the kubelet's TestStorageLimitEvictions: without node pressure (no
// thresholds at all), a pod above an emptyDir's sizeLimit, its pod's ephemeral-storage limit
// or a container's is evicted at once with the kubelet's message; one within its limits, or
// critical, is not.
func TestLocalStorageEviction(t *testing.T) {
	ctx := context.Background()
	limit := func(pod *corev1.Pod, l string) *corev1.Pod {
		pod.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse(l)}
		return pod
	}
	sized := withScratch(podSpec("sized", 0, nil))
	sized.Spec.Volumes[0].EmptyDir.SizeLimit = ptr.To(resource.MustParse("100Mi"))
	podLimited := limit(withScratch(podSpec("pod-limited", 0, nil)), "200Mi") // 150Mi of volume, 60Mi of logs
	containerLimited := limit(withScratch(podSpec("container-limited", 0, nil)), "50Mi")
	// A second container with room: the pod's limit (the sum) is not exceeded, c's is.
	containerLimited.Spec.Containers = append(containerLimited.Spec.Containers, corev1.Container{Name: "d",
		Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse("1Gi")}}})
	within := limit(withScratch(podSpec("within", 0, nil)), "1Gi")
	critical := withScratch(podSpec("critical", SystemCriticalPriority, nil))
	critical.Spec.Volumes[0].EmptyDir.SizeLimit = ptr.To(resource.MustParse("1Mi"))
	unlimited := withScratch(podSpec("unlimited", 0, nil))
	pods := &fakePods{
		pods: []*corev1.Pod{sized, podLimited, containerLimited, within, critical, unlimited},
		stats: map[types.UID]statsv1alpha1.PodStats{
			sized.UID:            diskStats(sized, "0", "0", "150Mi"),
			podLimited.UID:       diskStats(podLimited, "0", "60Mi", "150Mi"),
			containerLimited.UID: diskStats(containerLimited, "30Mi", "30Mi", "0"),
			within.UID:           diskStats(within, "10Mi", "10Mi", "500Mi"),
			critical.UID:         diskStats(critical, "0", "0", "10Mi"),
			unlimited.UID:        diskStats(unlimited, "0", "0", "5Gi"),
		},
	}
	m := NewManager(Config{Measure: (&fakeNode{}).measure, Clock: testingclock.NewFakeClock(time.Unix(0, 0)),
		ActivePods: pods.active, PodStats: pods.podStats, EvictPod: pods.evict})
	assert.Len(t, m.Synchronize(ctx), 3)
	assert.ElementsMatch(t, []evicted{
		{"sized", time.Second, `Usage of EmptyDir volume "scratch" exceeds the limit "100Mi". `},
		{"pod-limited", time.Second, "Pod ephemeral local storage usage exceeds the total limit of containers 200Mi. "},
		{"container-limited", time.Second, `Container c exceeded its local ephemeral storage limit "50Mi". `},
	}, pods.take())
}
