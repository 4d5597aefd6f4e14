package process

import (
	"context"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vk-static/vk-static/lifecycle"
	"github.com/vk-static/vk-static/lifecycle/health"
	"github.com/vk-static/vk-static/runtime/process/internal/records"
)

// TestStatusFollowsTheSupervisors: the runtime is ready while its state directory takes files
// and its supervisors answer; a supervisor that stops answering (SIGSTOP) makes it not ready,
// naming the container, and answering again makes it ready — the container untouched.
func TestStatusFollowsTheSupervisors(t *testing.T) {
	ctx := context.Background()
	r := newTestRuntime(t, Config{})
	st, err := r.Status(ctx)
	require.NoError(t, err)
	require.True(t, st.Condition(health.RuntimeReady).Status, "%+v", st)
	require.True(t, st.Condition(health.NetworkReady).Status, "%+v", st)

	id := run(t, r, lifecycle.ContainerConfig{Command: []string{"sleep", "60"}})
	st, err = r.Status(ctx)
	require.NoError(t, err)
	require.True(t, st.Condition(health.RuntimeReady).Status, "%+v", st)

	rec, err := records.ReadState(r.containerDir(id))
	require.NoError(t, err)
	require.NoError(t, syscall.Kill(rec.SupervisorPID, syscall.SIGSTOP))
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			assert.NoError(t, syscall.Kill(rec.SupervisorPID, syscall.SIGCONT))
		}
	}
	defer resume()
	st, err = r.Status(ctx)
	require.NoError(t, err)
	c := st.Condition(health.RuntimeReady)
	assert.False(t, c.Status)
	assert.Equal(t, ReasonSupervisorsNotAnswer, c.Reason)
	assert.Contains(t, c.Message, id)

	resume()
	st, err = r.Status(ctx)
	require.NoError(t, err)
	require.True(t, st.Condition(health.RuntimeReady).Status, "%+v", st)
	assert.Equal(t, lifecycle.ContainerRunning, status(t, r, id).State)
}
