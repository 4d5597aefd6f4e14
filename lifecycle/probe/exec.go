package probe

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// maxExecOutput is how much of an exec probe's output the kubelet keeps (10 KiB).
const maxExecOutput = 10 << 10

// execProbe runs an exec probe's command in the container, bounded by timeout: exit 0 passes,
// any other exit fails with the output as the message, and a command still running at the
// timeout fails as the kubelet's "command timed out". A command that could not run is an error.
func execProbe(ctx context.Context, cmd []string, timeout time.Duration, t Target) (outcome, string, error) {
	if t.Exec == nil {
		return outcomeUnknown, "", ErrExecUnsupported
	}
	execCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	output, code, err := t.Exec(execCtx, cmd)
	if len(output) > maxExecOutput {
		output = output[:maxExecOutput]
	}
	if err != nil {
		// The probe's own timeout, not the caller's cancellation, is a failure.
		if ctx.Err() == nil && errors.Is(execCtx.Err(), context.DeadlineExceeded) {
			return outcomeFailure, fmt.Sprintf("command timed out: %q timed out after %s", strings.Join(cmd, " "), timeout), nil
		}
		return outcomeUnknown, "", fmt.Errorf("exec probe %q: %w", strings.Join(cmd, " "), err)
	}
	if code != 0 {
		return outcomeFailure, string(output), nil
	}
	return outcomeSuccess, string(output), nil
}
