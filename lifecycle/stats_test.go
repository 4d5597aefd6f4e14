package lifecycle

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	clocktesting "k8s.io/utils/clock/testing"
)

// psiRuntime is the fake runtime with pressure stall information: each container's, by
// container name, and the pod's as a whole (SandboxStatsReader) unless sandboxErr.
type psiRuntime struct {
	*fakeRuntime
	mu         sync.Mutex
	containers map[string]PSI
	pod        PSI
	sandboxErr error
	sandboxIDs []string
}

func (r *psiRuntime) ContainerStats(ctx context.Context, id string) (*ContainerStats, error) {
	s, err := r.fakeRuntime.ContainerStats(ctx, id)
	if err != nil {
		return nil, err
	}
	r.fakeRuntime.mu.Lock()
	name := r.fakeRuntime.containers[id].cfg.Name
	r.fakeRuntime.mu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	s.PSI = r.containers[name]
	return s, nil
}

func (r *psiRuntime) SandboxStats(_ context.Context, id string) (*SandboxStats, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sandboxIDs = append(r.sandboxIDs, id)
	if r.sandboxErr != nil {
		return nil, r.sandboxErr
	}
	return &SandboxStats{Timestamp: r.clock.Now(), PSI: r.pod}, nil
}

func pressure(someTotal uint64, avg10 float64) *statsv1alpha1.PSIStats {
	return &statsv1alpha1.PSIStats{Some: statsv1alpha1.PSIData{Total: someTotal, Avg10: avg10}, Full: statsv1alpha1.PSIData{Total: someTotal / 2}}
}

func newPSIHarness(t *testing.T, rt func(*fakeRuntime) Runtime) *harness {
	h := &harness{t: t, clock: clocktesting.NewFakeClock(time.Date(2026, 11, 23, 7, 0, 0, 0, time.UTC)), root: t.TempDir(),
		events: record.NewFakeRecorder(1000)}
	h.rt = newFakeRuntime(h.clock)
	h.runtime = rt(h.rt)
	h.start()
	return h
}

// The Summary carries the runtime's pressure stall information where the kubelet's does: each
// container's CPU, memory and IO from the container's own, the pod's from the pod as a whole
// (the sandbox: its cgroup) and never summed from its containers'. A container without IO
// pressure has no IO stats.
func TestSummaryCarriesPressureStallInformation(t *testing.T) {
	var rt *psiRuntime
	h := newPSIHarness(t, func(f *fakeRuntime) Runtime {
		rt = &psiRuntime{fakeRuntime: f, containers: map[string]PSI{
			"web":     {CPU: pressure(1000, 1.5), Memory: pressure(200, 0), IO: pressure(30, 0.25)},
			"sidecar": {CPU: pressure(10, 0), Memory: pressure(20, 0)},
		}, pod: PSI{CPU: pressure(5000, 2), Memory: pressure(600, 0.5), IO: pressure(70, 0.5)}}
		return rt
	})
	pod := testPod("s1", corev1.RestartPolicyAlways, ctr("web", "web"), ctr("sidecar", "sidecar"))
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	h.eventually(pod.UID, "running", func(s *corev1.PodStatus) bool {
		return len(s.ContainerStatuses) == 2 && mainState(s, 0).Running != nil && mainState(s, 1).Running != nil
	})

	summary, err := h.p.GetStatsSummary(context.Background())
	require.NoError(t, err)
	require.Len(t, summary.Pods, 1)
	ps := summary.Pods[0]
	assert.Equal(t, rt.pod.CPU, ps.CPU.PSI, "the pod's own, not a sum")
	assert.Equal(t, rt.pod.Memory, ps.Memory.PSI)
	require.NotNil(t, ps.IO)
	assert.Equal(t, rt.pod.IO, ps.IO.PSI)
	assert.Equal(t, h.clock.Now().Unix(), ps.IO.Time.Unix())
	require.Len(t, ps.Containers, 2)
	for _, c := range ps.Containers {
		want := rt.containers[c.Name]
		assert.Equal(t, want.CPU, c.CPU.PSI, c.Name)
		assert.Equal(t, want.Memory, c.Memory.PSI, c.Name)
		if want.IO == nil {
			assert.Nil(t, c.IO, "%s: no IO stats without IO pressure", c.Name)
		} else if assert.NotNil(t, c.IO, c.Name) {
			assert.Equal(t, want.IO, c.IO.PSI, c.Name)
		}
	}
	assert.Len(t, rt.sandboxIDs, 1, "the pod measured once")

	// The JSON is the kubelet's: psi in cpu, memory and io, total as given.
	data, err := json.Marshal(ps)
	require.NoError(t, err)
	var got struct {
		CPU, Memory struct {
			PSI *statsv1alpha1.PSIStats `json:"psi"`
		}
		IO struct {
			PSI *statsv1alpha1.PSIStats `json:"psi"`
		} `json:"io"`
	}
	require.NoError(t, json.Unmarshal(data, &got))
	assert.Equal(t, uint64(5000), got.CPU.PSI.Some.Total)
	assert.Equal(t, uint64(600), got.Memory.PSI.Some.Total)
	assert.Equal(t, uint64(70), got.IO.PSI.Some.Total)

	// The pod cannot be measured as a whole: its figures go on without PSI, its containers'
	// keep theirs.
	rt.mu.Lock()
	rt.sandboxErr = errors.New("gone")
	rt.mu.Unlock()
	summary, err = h.p.GetStatsSummary(context.Background())
	require.NoError(t, err)
	require.Len(t, summary.Pods, 1)
	assert.Nil(t, summary.Pods[0].CPU.PSI)
	assert.Nil(t, summary.Pods[0].Memory.PSI)
	assert.Nil(t, summary.Pods[0].IO)
	assert.NotNil(t, summary.Pods[0].CPU.UsageCoreNanoSeconds)
	assert.NotNil(t, summary.Pods[0].Containers[0].CPU.PSI)
}

// A runtime without PSI (cgroup v1, no cgroups, a runtime that cannot tell) and without
// SandboxStatsReader: no psi and no io anywhere in the Summary's JSON, rather than zeros that
// would say nothing.
func TestSummaryWithoutPressureStallInformation(t *testing.T) {
	h := newHarness(t)
	pod := testPod("s2", corev1.RestartPolicyAlways, ctr("web", "web"))
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	h.eventually(pod.UID, "running", func(s *corev1.PodStatus) bool { return mainState(s, 0).Running != nil })
	summary, err := h.p.GetStatsSummary(context.Background())
	require.NoError(t, err)
	require.Len(t, summary.Pods, 1)
	data, err := json.Marshal(summary)
	require.NoError(t, err)
	assert.NotContains(t, string(data), `"psi"`)
	assert.NotContains(t, string(data), `"io"`)
}
