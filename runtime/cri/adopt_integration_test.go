package cri_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vk-static/vk-static/lifecycle"
	"github.com/vk-static/vk-static/runtime/cri"
	"github.com/vk-static/vk-static/test/support/testimage"
)

// events collects container events.
type events struct {
	mu  sync.Mutex
	all []lifecycle.ContainerEvent
}

func (e *events) add(ev lifecycle.ContainerEvent) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.all = append(e.all, ev)
}

func (e *events) of(id string, typ lifecycle.ContainerEventType) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, ev := range e.all {
		if ev.ContainerID == id && ev.Type == typ {
			n++
		}
	}
	return n
}

func TestANewRuntimeAdoptsAndContainerdRestartsWithoutFalseExits(t *testing.T) {
	ctx := context.Background()
	importImage(t, logImage, testimage.Options{Cmd: []string{"log", "--every", "50ms"}})
	first := newRuntime(t, cri.Config{})
	pod := testPod("adopt", logImage)
	sandboxID, sandbox := sandboxFor(t, first, pod)
	id, _ := runContainer(t, first, sandboxID, sandbox)

	// A new agent: a new Runtime on the same containerd finds the sandbox and the container.
	second := newRuntime(t, cri.Config{RelistPeriod: 100 * time.Millisecond})
	adopted := listedContainer(t, second, id)
	require.NotNil(t, adopted, "container listed by the new runtime")
	assert.Equal(t, lifecycle.ContainerRunning, adopted.State)
	assert.Equal(t, sandboxID, adopted.SandboxID)
	assert.Equal(t, "main", adopted.Labels[lifecycle.LabelContainerName])

	ectx, cancel := context.WithCancel(ctx)
	defer cancel()
	var got events
	second.NotifyContainers(ectx, got.add)
	// Another container's exit, reported, shows the relist has its baseline (where the
	// running container was no event).
	otherSandboxID, otherSandbox := sandboxFor(t, first, testPod("adopt-other", logImage))
	other, _ := runContainer(t, first, otherSandboxID, otherSandbox)
	require.NoError(t, first.StopContainer(ctx, other, 5*time.Second))
	require.Eventually(t, func() bool { return got.of(other, lifecycle.ContainerExitedEvent) == 1 }, 10*time.Second, 20*time.Millisecond)
	assert.Zero(t, got.of(id, lifecycle.ContainerExitedEvent))
	assert.Zero(t, got.of(id, lifecycle.ContainerStartedEvent), "running when first listed: no event")

	require.NoError(t, cd.Restart(ctx))
	require.Eventually(t, func() bool {
		st, err := second.ContainerStatus(ctx, id)
		return err == nil && st.State == lifecycle.ContainerRunning
	}, 20*time.Second, 50*time.Millisecond, "the container still runs after containerd's restart")
	assert.Zero(t, got.of(id, lifecycle.ContainerExitedEvent), "no exit while containerd restarted")

	require.NoError(t, second.StopContainer(ctx, id, 5*time.Second))
	require.Eventually(t, func() bool { return got.of(id, lifecycle.ContainerExitedEvent) == 1 }, 10*time.Second, 20*time.Millisecond,
		"the relist reports the exit after the restart")
}
