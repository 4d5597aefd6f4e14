package process

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"syscall"

	"github.com/vk-static/vk-static/lifecycle"
	"github.com/vk-static/vk-static/runtime/process/internal/procfs"
	"github.com/vk-static/vk-static/runtime/process/internal/protocol"
	"github.com/vk-static/vk-static/runtime/process/internal/records"
)

// watch is the runtime's connection to a running container's supervisor: the supervisor
// closes it after recording the workload's end (or the kernel does when the supervisor dies).
type watch struct {
	id, sandboxID string
	labels        map[string]string
	conn          net.Conn
	reader        io.Reader
	// cmd is the supervisor when this agent started it (it is our child and must be reaped);
	// nil for a supervisor taken up after a restart.
	cmd  *exec.Cmd
	done chan struct{} // closed once the end is recorded
}

func (r *Runtime) watchOf(id string) *watch {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.watches[id]
}

// track registers w and waits, in a goroutine, for its end.
func (r *Runtime) track(w *watch) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		w.conn.Close()
		return
	}
	r.watches[w.id] = w
	r.wg.Add(1)
	r.mu.Unlock()
	go func() {
		defer r.wg.Done()
		_, _ = io.Copy(io.Discard, w.reader)
		r.mu.Lock()
		closed := r.closed
		r.mu.Unlock()
		if closed {
			return // Close: the container runs on; the next Runtime takes it up
		}
		if w.cmd != nil {
			_ = w.cmd.Wait() // the supervisor exits right after closing its watches
		}
		r.concludeLost(context.Background(), w.id, "the supervisor ended without recording the container's end")
		r.concludeCgroup(context.Background(), w.id)
		r.mu.Lock()
		delete(r.watches, w.id)
		r.mu.Unlock()
		close(w.done)
		r.emit(lifecycle.ContainerEvent{ContainerID: w.id, SandboxID: w.sandboxID, Type: lifecycle.ContainerExitedEvent, Labels: w.labels})
	}()
}

// concludeLost handles a supervisor that is gone: if it did not record the workload's end, the
// end it logged instead (records.UnrecordedLine: the real exit code, reason EndNotRecorded) is
// recorded; failing that — it was killed — the workload (if its pid still is it) is killed and
// the container recorded Exited with ReasonSupervisorLost (StartError if it never started).
func (r *Runtime) concludeLost(ctx context.Context, id, why string) {
	st, err := r.readState(id)
	if err != nil || (st != nil && st.State == records.StateExited) {
		return
	}
	if end := r.endFromSupervisorLog(ctx, id); end != nil {
		_ = r.recordEnd(ctx, id, end) // reported there when it fails
		logger(ctx).Info("Container's end taken from its supervisor's log, which could not record it", "container", id, "exitCode", end.ExitCode, "message", end.Message)
		return
	}
	if st == nil {
		_ = r.recordStartError(ctx, id, errors.New(why)) // reported there when it fails
		return
	}
	if procfs.SameProcess(st.Pid, st.PidStartTime) == nil {
		_ = syscall.Kill(-st.Pid, syscall.SIGKILL)
		why += fmt.Sprintf("; its processes (group %d) were killed", st.Pid)
	}
	st.State, st.FinishedAt = records.StateExited, r.clock.Now()
	st.ExitCode, st.Reason, st.Message = records.SupervisorLostExitCode, ReasonSupervisorLost, why
	_ = r.recordEnd(ctx, id, st) // reported there when it fails
	logger(ctx).Info("Container's supervisor lost", "container", id, "message", why)
}

// adoptAll takes up watching every container recorded as running: after an agent restart,
// their supervisors still run them.
func (r *Runtime) adoptAll() error {
	ids, err := r.listIDs(containersDir)
	if err != nil {
		return err
	}
	for _, id := range ids {
		rec, err := r.loadContainer(id)
		if err != nil {
			continue
		}
		st, err := records.ReadState(r.containerDir(id))
		if err != nil || st == nil || st.State != records.StateRunning {
			// Ended while no agent watched: its cgroup is finished now.
			r.concludeCgroup(context.Background(), id)
			continue
		}
		r.adopt(rec)
	}
	return nil
}

func (r *Runtime) adopt(rec *containerRecord) {
	conn, err := protocol.Dial(r.containerDir(rec.ID))
	if err == nil {
		err = protocol.SendRequest(conn, protocol.Request{Op: protocol.OpWatch}, nil)
		if err != nil {
			conn.Close()
		}
	}
	if err != nil {
		r.concludeLost(context.Background(), rec.ID, fmt.Sprintf("the supervisor is gone (%v) without recording the container's end", err))
		r.concludeCgroup(context.Background(), rec.ID)
		return
	}
	r.track(&watch{id: rec.ID, sandboxID: rec.SandboxID, labels: rec.Config.Labels, conn: conn, reader: bufio.NewReader(conn), done: make(chan struct{})})
}
