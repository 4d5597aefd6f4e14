package process

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vk-static/vk-static/lifecycle/health"
	"github.com/vk-static/vk-static/runtime/process/internal/protocol"
)

var _ health.Checker = (*Runtime)(nil)

// Reasons of the process runtime's RuntimeReady condition when it is false.
const (
	ReasonStateNotWritable     = "StateDirNotWritable"
	ReasonSupervisorMissing    = "SupervisorNotExecutable"
	ReasonSupervisorsNotAnswer = "SupervisorsNotAnswering"
)

// supervisorAnswerTimeout bounds the wait for one supervisor's answer.
const supervisorAnswerTimeout = 2 * time.Second

// Status is the process runtime's health, in CRI's terms so that the Node's Ready condition
// follows it as the kubelet's follows CRI's: RuntimeReady says whether it can start and keep
// containers — its state directory takes a file (a full or read-only disk cannot record a
// container), the supervisor binary is executable, and every running container's supervisor
// answers on its socket; NetworkReady is always true (pods share the host's network).
func (r *Runtime) Status(ctx context.Context) (*health.Status, error) {
	runtime := health.Condition{Type: health.RuntimeReady, Status: true}
	if err := r.stateWritable(); err != nil {
		runtime = health.Condition{Type: health.RuntimeReady, Reason: ReasonStateNotWritable, Message: err.Error()}
	} else if err := unix.Access(r.supervisor, unix.X_OK); err != nil {
		runtime = health.Condition{Type: health.RuntimeReady, Reason: ReasonSupervisorMissing,
			Message: fmt.Sprintf("supervisor %s: %v", r.supervisor, err)}
	} else if silent := r.silentSupervisors(ctx); len(silent) > 0 {
		runtime = health.Condition{Type: health.RuntimeReady, Reason: ReasonSupervisorsNotAnswer,
			Message: "the supervisors of containers " + strings.Join(silent, ", ") + " do not answer"}
	}
	return &health.Status{Conditions: []health.Condition{runtime, {Type: health.NetworkReady, Status: true}}}, nil
}

// stateWritable writes, syncs and removes a file in the state directory.
func (r *Runtime) stateWritable() error {
	f, err := os.CreateTemp(filepath.Join(r.cfg.StateDir, containersDir), ".health-*")
	if err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	defer os.Remove(f.Name())
	_, err = f.WriteString("ok")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	return nil
}

// silentSupervisors are the running containers whose supervisors do not answer a request. Any
// answer counts (the request's operation is one no supervisor knows, so it replies with an
// error and does nothing): it shows the supervisor accepts and serves connections. A container
// that ended meanwhile is not counted.
func (r *Runtime) silentSupervisors(ctx context.Context) []string {
	r.mu.Lock()
	ids := make([]string, 0, len(r.watches))
	for id := range r.watches {
		ids = append(ids, id)
	}
	r.mu.Unlock()
	var silent []string
	for _, id := range ids {
		if ctx.Err() != nil {
			break
		}
		if err := r.askSupervisor(id); err != nil && r.watchOf(id) != nil {
			silent = append(silent, id)
		}
	}
	sort.Strings(silent)
	return silent
}

// askSupervisor sends a request the supervisor does not know and waits for its answer.
func (r *Runtime) askSupervisor(id string) error {
	conn, err := protocol.Dial(r.containerDir(id))
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(supervisorAnswerTimeout)); err != nil {
		return err
	}
	if err := protocol.SendRequest(conn, protocol.Request{Op: "health"}, nil); err != nil {
		return err
	}
	if _, err := bufio.NewReader(conn).ReadString('\n'); err != nil {
		return err
	}
	return nil
}
