package mock

import (
	"context"
	"math/big"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

func u64(v uint64) *uint64 { return &v }

func cpuStats(at time.Time, nanoCores, coreNanoSeconds uint64) *statsv1alpha1.CPUStats {
	return &statsv1alpha1.CPUStats{Time: metav1.NewTime(at), UsageNanoCores: u64(nanoCores), UsageCoreNanoSeconds: u64(coreNanoSeconds)}
}

func memoryStats(at time.Time, bytes uint64) *statsv1alpha1.MemoryStats {
	return &statsv1alpha1.MemoryStats{Time: metav1.NewTime(at), WorkingSetBytes: u64(bytes), UsageBytes: u64(bytes)}
}

func requests(cpu, memory string) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{Requests: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory),
	}}
}

// The whole summary, exactly: what runs counts, at its requests, for as long as it has run.
func TestGetStatsSummary(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	h.clock.Step(time.Hour) // the provider started an hour before its first pod

	web := newPod("web", nil) // app: 250m, 64Mi; side: the defaults (10m, 16Mi); init: completed
	web.Spec.Containers[0].Resources = requests("250m", "64Mi")
	require.NoError(t, h.p.CreatePod(ctx, web))
	h.clock.Step(2 * time.Second)
	sidecar := newPod("z-agent", nil) // a running sidecar counts; created 2s after web
	sidecar.Namespace = "a-first"     // sorted by namespace first
	always := corev1.ContainerRestartPolicyAlways
	sidecar.Spec.InitContainers[0].RestartPolicy = &always
	sidecar.Spec.InitContainers[0].Resources = requests("1", "1Gi")
	sidecar.Spec.Containers = sidecar.Spec.Containers[:1]
	require.NoError(t, h.p.CreatePod(ctx, sidecar))
	require.NoError(t, h.p.CreatePod(ctx, newPod("slow", map[string]string{CreateDelayAnnotation: "1h"}))) // nothing runs yet
	h.clock.Step(3 * time.Second)

	got, err := h.p.GetStatsSummary(ctx)
	require.NoError(t, err)

	start := epoch.Add(time.Hour)
	now := start.Add(5 * time.Second)
	const (
		mi      = 1 << 20
		appCPU  = 250_000_000 // nanocores
		sideCPU = 10_000_000
	)
	want := &statsv1alpha1.Summary{
		Node: statsv1alpha1.NodeStats{
			NodeName:  "node-a",
			StartTime: metav1.NewTime(epoch),
			CPU:       cpuStats(now, 1e9+10e6+appCPU+sideCPU, 1e9*3+10e6*3+appCPU*5+sideCPU*5),
			Memory: &statsv1alpha1.MemoryStats{
				Time: metav1.NewTime(now), WorkingSetBytes: u64(1024*mi + 16*mi + 64*mi + 16*mi), UsageBytes: u64(1024*mi + 16*mi + 64*mi + 16*mi),
				AvailableBytes: u64(100*1024*mi - (1024*mi + 16*mi + 64*mi + 16*mi)),
			},
		},
		Pods: []statsv1alpha1.PodStats{
			{
				PodRef:    statsv1alpha1.PodReference{Namespace: "a-first", Name: "z-agent", UID: "uid-z-agent"},
				StartTime: metav1.NewTime(start.Add(2 * time.Second)),
				Containers: []statsv1alpha1.ContainerStats{
					{Name: "init", StartTime: metav1.NewTime(start.Add(2 * time.Second)), CPU: cpuStats(now, 1e9, 1e9*3), Memory: memoryStats(now, 1024*mi)},
					{Name: "app", StartTime: metav1.NewTime(start.Add(2 * time.Second)), CPU: cpuStats(now, 10e6, 10e6*3), Memory: memoryStats(now, 16*mi)},
				},
				CPU:    cpuStats(now, 1e9+10e6, 1e9*3+10e6*3),
				Memory: memoryStats(now, 1024*mi+16*mi),
			},
			{
				PodRef:    statsv1alpha1.PodReference{Namespace: "ns", Name: "web", UID: "uid-web"},
				StartTime: metav1.NewTime(start),
				Containers: []statsv1alpha1.ContainerStats{
					{Name: "app", StartTime: metav1.NewTime(start), CPU: cpuStats(now, appCPU, appCPU*5), Memory: memoryStats(now, 64*mi)},
					{Name: "side", StartTime: metav1.NewTime(start), CPU: cpuStats(now, sideCPU, sideCPU*5), Memory: memoryStats(now, 16*mi)},
				},
				CPU:    cpuStats(now, appCPU+sideCPU, appCPU*5+sideCPU*5),
				Memory: memoryStats(now, 80*mi),
			},
		},
	}
	assert.Equal(t, want, got)
}

// A restarted container's CPU time counts from its restart; a finished pod is left out.
func TestGetStatsSummaryFollowsLifecycle(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	pod := newPod("web", nil)
	pod.Spec.Containers = pod.Spec.Containers[:1]
	require.NoError(t, h.p.CreatePod(ctx, pod))
	h.clock.Step(10 * time.Second)
	pod.Spec.Containers[0].Image = "nginx:2"
	require.NoError(t, h.p.UpdatePod(ctx, pod))
	h.clock.Step(time.Second)

	got, err := h.p.GetStatsSummary(ctx)
	require.NoError(t, err)
	require.Len(t, got.Pods, 1)
	require.Len(t, got.Pods[0].Containers, 1)
	app := got.Pods[0].Containers[0]
	assert.Equal(t, metav1.NewTime(epoch.Add(10*time.Second)), app.StartTime)
	assert.Equal(t, uint64(10e6), *app.CPU.UsageCoreNanoSeconds, "10m for the one second since the restart")
	assert.Equal(t, metav1.NewTime(epoch), got.Pods[0].StartTime, "the pod did not restart")

	require.NoError(t, h.p.DeletePod(ctx, pod))
	got, err = h.p.GetStatsSummary(ctx)
	require.NoError(t, err)
	assert.Empty(t, got.Pods)
	assert.NotNil(t, got.Pods, "an empty list, not null, in JSON")
	assert.Equal(t, uint64(0), *got.Node.CPU.UsageNanoCores)
	assert.Equal(t, uint64(100<<30), *got.Node.Memory.AvailableBytes)
}

func TestContainerUsage(t *testing.T) {
	year := 365 * 24 * time.Hour
	for _, tc := range []struct {
		name      string
		resources corev1.ResourceRequirements
		running   time.Duration
		wantMilli int64
		wantBytes uint64
	}{
		{name: "defaults", running: time.Minute, wantMilli: 10, wantBytes: 16 << 20},
		{name: "requests", resources: requests("1500m", "1Gi"), running: 1500 * time.Millisecond, wantMilli: 1500, wantBytes: 1 << 30},
		{name: "limits only: no request", resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}, running: time.Second, wantMilli: 10, wantBytes: 16 << 20},
		{name: "a large container for a year", resources: requests("64", "256Gi"), running: year + 123456789, wantMilli: 64000, wantBytes: 256 << 30},
		{name: "a clock that went back", running: -time.Second, wantMilli: 10, wantBytes: 16 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := containerUsage(tc.resources.Requests, tc.running)
			assert.Equal(t, uint64(tc.wantMilli)*1e6, u.nanoCores)
			assert.Equal(t, tc.wantBytes, u.memoryBytes)
			// core-nanoseconds = cores × nanoseconds = milli × ns / 1000, exactly
			want := new(big.Int).Mul(big.NewInt(tc.wantMilli), big.NewInt(int64(max(tc.running, 0))))
			want.Quo(want, big.NewInt(1000))
			assert.Equal(t, want.String(), new(big.Int).SetUint64(u.coreNanoSeconds).String())
		})
	}
}

func TestDefaultContainerUsageConstants(t *testing.T) {
	cpu, memory := resource.MustParse(DefaultContainerCPU), resource.MustParse(DefaultContainerMemory)
	assert.Equal(t, int64(defaultContainerMilliCPU), cpu.MilliValue())
	assert.Equal(t, int64(defaultContainerMemoryBytes), memory.Value())
}
