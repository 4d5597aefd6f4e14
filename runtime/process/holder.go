package process

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"

	"github.com/vk-static/vk-static/runtime/process/internal/procfs"
	"github.com/vk-static/vk-static/runtime/process/internal/protocol"
	"github.com/vk-static/vk-static/runtime/process/internal/records"
)

// startHolder starts a restricted pod's namespace holder ([supervisor.RunHolderIfRequested]): the
// PID 1 of the pod's PID namespace, in its IPC and UTS namespaces with hostname set — and its
// network namespace, with ownNetwork — which its containers join. It is nobody's child once started (the supervisor binary that starts it
// exits), so no goroutine of the agent waits for it.
func (r *Runtime) startHolder(hostname string, ownNetwork bool) (*records.Holder, error) {
	network := protocol.HolderHostNetwork
	if ownNetwork {
		network = protocol.HolderOwnNetwork
	}
	// Not ended with ctx: the holder it starts would be left, unrecorded. It returns in
	// milliseconds.
	cmd := exec.Command(r.supervisor)
	cmd.Args = []string{protocol.HolderArg0, protocol.HolderStart, hostname, network}
	cmd.Env = binaryEnv()
	cmd.Dir = "/"
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return nil, errors.New(msg)
		}
		return nil, fmt.Errorf("start the pod's namespace holder: %w", err)
	}
	var rep protocol.HolderReport
	if err := json.Unmarshal(out, &rep); err != nil || rep.Pid <= 0 {
		return nil, fmt.Errorf("start the pod's namespace holder: it reported %q", out)
	}
	return &records.Holder{Pid: rep.Pid, StartTime: rep.PidStartTime}, nil
}

// holderAlive reports whether the holder still runs: a pod whose holder is gone has no
// namespaces for its containers to join, and its sandbox is not ready.
func holderAlive(h *records.Holder) bool {
	return h == nil || procfs.SameProcess(h.Pid, h.StartTime) == nil
}

// killHolder kills the holder, if it still is the process recorded, and with it every process
// left in the pod's PID namespace (the kernel's end of a namespace's PID 1).
func killHolder(h *records.Holder) error {
	if h == nil {
		return nil
	}
	if err := procfs.SameProcess(h.Pid, h.StartTime); err != nil {
		if errors.Is(err, procfs.ErrProcessGone) {
			return nil
		}
		return err
	}
	if err := syscall.Kill(h.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill the pod's namespace holder (pid %d): %w", h.Pid, err)
	}
	return nil
}

// netnsPath is the holder's network namespace, for the pod network's plugins.
func netnsPath(h *records.Holder) string {
	return fmt.Sprintf("/proc/%d/ns/net", h.Pid)
}

// isolate starts a restricted pod's holder and, when the pod gets a network of its own (own),
// puts it on the pod network; nothing is left of either when it fails.
func (r *Runtime) isolate(ctx context.Context, rec *sandboxRecord, own bool) error {
	hostname := rec.Config.Hostname
	if hostname == "" {
		hostname = rec.Config.Name
	}
	var err error
	if rec.Holder, err = r.startHolder(hostname, own); err != nil {
		return err
	}
	if own {
		if err := r.attach(ctx, rec); err != nil {
			_ = killHolder(rec.Holder)
			return err
		}
	}
	return nil
}
