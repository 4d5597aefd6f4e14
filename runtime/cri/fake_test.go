package cri

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	critesting "k8s.io/cri-api/pkg/apis/testing"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/vk-static/vk-static/lifecycle"
)

// fakeRuntime is a Runtime over cri-api's fakes, with a fake clock.
func fakeRuntime(t *testing.T, cfg Config) (*Runtime, *critesting.FakeRuntimeService, *critesting.FakeImageService, *testingclock.FakeClock) {
	t.Helper()
	rs, is := critesting.NewFakeRuntimeService(), critesting.NewFakeImageService()
	clk := testingclock.NewFakeClock(time.Unix(1000, 0))
	cfg.RuntimeService, cfg.ImageService, cfg.Clock = rs, is, clk
	r, err := New(context.Background(), cfg)
	require.NoError(t, err)
	return r, rs, is, clk
}

func TestAdmitNeedsNetworkReadyOffTheHostNetwork(t *testing.T) {
	r, rs, _, _ := fakeRuntime(t, Config{})
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}}
	rs.FakeStatus = &runtimeapi.RuntimeStatus{Conditions: []*runtimeapi.RuntimeCondition{{Type: runtimeapi.NetworkReady, Status: false}}}
	err := r.Admit(pod)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "spec.hostNetwork")
	pod.Spec.HostNetwork = true
	assert.NoError(t, r.Admit(pod), "the host's network needs no CNI")
	pod.Spec.HostNetwork = false
	rs.FakeStatus.Conditions[0].Status = true
	assert.NoError(t, r.Admit(pod))
}

func TestImageGCRemovesTheLeastRecentlyUsedUnusedImagesOnly(t *testing.T) {
	ctx := context.Background()
	r, rs, is, clk := fakeRuntime(t, Config{ImageGCHighThreshold: 85, ImageGCLowThreshold: 80})
	is.SetFakeImageSize(10)
	is.SetFakeImagePinned("pinned", true) // before the images are made
	is.SetFakeImages([]string{"old", "recent", "used", "pinned"})
	gc := r.ImageGC()
	require.NotNil(t, gc)
	available := uint64(50)
	gc.capacity = func(string) (uint64, uint64, error) { return 100, available, nil }
	is.SetFakeFilesystemUsage([]*runtimeapi.FilesystemUsage{{FsId: &runtimeapi.FilesystemIdentifier{Mountpoint: "/images"}}})

	container := func(id, image string) *critesting.FakeContainer {
		return &critesting.FakeContainer{ContainerStatus: runtimeapi.ContainerStatus{
			Id: id, State: runtimeapi.ContainerState_CONTAINER_EXITED, Image: &runtimeapi.ImageSpec{Image: image}, ImageRef: image,
		}}
	}
	rs.SetFakeContainers([]*critesting.FakeContainer{container("a", "recent"), container("b", "used")})
	freed, err := gc.Collect(ctx) // 50 % used: nothing to do but note what is in use
	require.NoError(t, err)
	assert.Zero(t, freed)
	clk.Step(time.Minute)
	rs.SetFakeContainers([]*critesting.FakeContainer{container("b", "used")})

	available = 15 // 85 %: free 5 bytes to get to 80 %, one image
	freed, err = gc.Collect(ctx)
	require.NoError(t, err)
	assert.Equal(t, uint64(10), freed)
	assert.NotContains(t, is.Images, "old", "never used: the least recently used")
	assert.Contains(t, is.Images, "recent")

	available = 5 // 95 %: 15 bytes, more than the unused images left hold
	freed, err = gc.Collect(ctx)
	assert.Error(t, err, "not enough to free")
	assert.Equal(t, uint64(10), freed)
	assert.NotContains(t, is.Images, "recent")
	assert.Contains(t, is.Images, "used", "in use by a container, even an exited one")
	assert.Contains(t, is.Images, "pinned")

	assert.Nil(t, (&Runtime{cfg: Config{ImageGCHighThreshold: 100}}).ImageGC(), "100 % disables")
}

// eventLog collects events.
type eventLog struct {
	mu  sync.Mutex
	all []lifecycle.ContainerEvent
}

func (e *eventLog) add(ev lifecycle.ContainerEvent) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.all = append(e.all, ev)
}

func (e *eventLog) len() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.all)
}

func TestRelistKeepsStateWhileTheRuntimeDoesNotAnswer(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, rs, _, clk := fakeRuntime(t, Config{})
	labels := map[string]string{LabelManaged: "true", lifecycle.LabelPodUID: "u"}
	c := &critesting.FakeContainer{SandboxID: "s", ContainerStatus: runtimeapi.ContainerStatus{Id: "a", State: runtimeapi.ContainerState_CONTAINER_RUNNING, Labels: labels}}
	rs.SetFakeContainers([]*critesting.FakeContainer{c})
	calls := func() int {
		rs.Lock()
		defer rs.Unlock()
		n := 0
		for _, c := range rs.Called {
			if c == "ListContainers" {
				n++
			}
		}
		return n
	}
	var got eventLog
	r.NotifyContainers(ctx, got.add)
	tick := func() {
		n := calls()
		require.Eventually(t, clk.HasWaiters, 5*time.Second, time.Millisecond)
		clk.Step(time.Second)
		require.Eventually(t, func() bool { return calls() > n }, 5*time.Second, time.Millisecond)
	}
	require.Eventually(t, func() bool { return calls() == 1 }, 5*time.Second, time.Millisecond)

	rs.InjectError("ListContainers", errors.New("connection refused"))
	tick() // fails: nothing reported, nothing forgotten
	tick() // answers: the container still runs
	assert.Zero(t, got.len())

	rs.Lock()
	c.State = runtimeapi.ContainerState_CONTAINER_EXITED
	rs.Unlock()
	tick()
	require.Eventually(t, func() bool { return got.len() == 1 }, 5*time.Second, time.Millisecond)
	got.mu.Lock()
	defer got.mu.Unlock()
	assert.Equal(t, lifecycle.ContainerEvent{ContainerID: "a", SandboxID: "s", Type: lifecycle.ContainerExitedEvent, Labels: map[string]string{lifecycle.LabelPodUID: "u"}}, got.all[0])
}
