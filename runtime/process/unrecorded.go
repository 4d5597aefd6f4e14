package process

import (
	"context"
	"fmt"

	"github.com/vk-static/vk-static/runtime/process/internal/records"
)

// recordEnd writes the end of a container that its supervisor did not record (a start that
// failed, a supervisor gone), trying again while it fails (records.WriteState). When it cannot
// be written either, the end is kept in memory — ContainerStatus reports it from there until the
// container is removed — and logged: a reader of the old state.json would otherwise see a
// container that never started or that still runs, and a restarted agent would invent an
// outcome for it.
func (r *Runtime) recordEnd(ctx context.Context, id string, st *records.State) error {
	err := records.WriteState(r.containerDir(id), st)
	if err == nil {
		return nil
	}
	r.mu.Lock()
	r.unrecorded[id] = st
	r.mu.Unlock()
	logger(ctx).Error(err, "Recording a container's end failed: it is reported from memory, and lost if the agent restarts",
		"container", id, "exitCode", st.ExitCode, "reason", st.Reason, "message", st.Message)
	return fmt.Errorf("container %s: record its end (exit code %d, %s): %w", id, st.ExitCode, st.Reason, err)
}

// readState is the container's state.json, or the end recordEnd could not write in its place.
func (r *Runtime) readState(id string) (*records.State, error) {
	st, err := records.ReadState(r.containerDir(id))
	if err != nil || (st != nil && st.State == records.StateExited) {
		return st, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if end := r.unrecorded[id]; end != nil {
		return end, nil
	}
	return st, nil
}

// endFromSupervisorLog is the end a supervisor could not write to state.json and logged instead
// (records.UnrecordedLine), marked as such; nil if it logged none.
func (r *Runtime) endFromSupervisorLog(ctx context.Context, id string) *records.State {
	st, why, err := records.LastUnrecorded(r.containerDir(id))
	if err != nil {
		logger(ctx).Error(err, "Reading the supervisor's log for an end it could not record", "container", id)
		return nil
	}
	if st == nil || st.State != records.StateExited {
		return nil
	}
	if st.Reason == "" {
		st.Reason = records.ReasonEndNotRecorded
	}
	note := "the supervisor could not record this end in state.json (" + why + "); it is taken from its log"
	if st.Message == "" {
		st.Message = note
	} else {
		st.Message += "; " + note
	}
	return st
}
