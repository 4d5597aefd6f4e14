package probe

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

// execReturning is a Target.Exec that answers every command with the same output, exit code
// and error, and records the commands it got.
func execReturning(output string, code int, err error, got *[][]string) func(context.Context, []string) ([]byte, int, error) {
	return func(_ context.Context, cmd []string) ([]byte, int, error) {
		if got != nil {
			*got = append(*got, cmd)
		}
		return []byte(output), code, err
	}
}

// execUntilCancelled is a Target.Exec whose command runs until its context ends.
func execUntilCancelled(ctx context.Context, _ []string) ([]byte, int, error) {
	<-ctx.Done()
	return nil, -1, ctx.Err()
}

func execProbeSpec(cmd ...string) *corev1.Probe {
	return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: cmd}}}
}

func TestRunExec(t *testing.T) {
	runtimeErr := errors.New("runtime gone")
	tests := []struct {
		name    string
		exec    func(context.Context, []string) ([]byte, int, error)
		want    Result
		wantMsg string
		wantErr error
	}{
		{"exit 0 passes", execReturning("ok\n", 0, nil, nil), Success, "ok\n", nil},
		{"exit 1 fails with the output", execReturning("not yet", 1, nil, nil), Failure, "not yet", nil},
		{"a timeout fails", execUntilCancelled, Failure, `command timed out: "check" timed out after 1s`, nil},
		{"a command that cannot run is an error", execReturning("", 0, runtimeErr, nil), Unknown, "", runtimeErr},
		{"no exec support is an error", nil, Unknown, "", ErrExecUnsupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, msg, err := Run(t.Context(), execProbeSpec("check"), Target{Exec: tt.exec})
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.wantMsg, msg)
		})
	}
}

func TestRunExecCancelledIsNotATimeout(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	got, _, err := Run(ctx, execProbeSpec("check"), Target{Exec: execUntilCancelled})
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, Unknown, got)
}

func TestRunExecKeepsTenKiBOfOutput(t *testing.T) {
	long := strings.Repeat("x", 20<<10)
	_, msg, err := Run(t.Context(), execProbeSpec("check"), Target{Exec: execReturning(long, 1, nil, nil)})
	require.NoError(t, err)
	assert.Len(t, msg, 10<<10)
}

func TestRunExecExpandsStaticEnv(t *testing.T) {
	var got [][]string
	target := Target{
		Env:  []corev1.EnvVar{{Name: "FILE", Value: "/tmp/healthy"}},
		Exec: execReturning("", 0, nil, &got),
	}
	_, _, err := Run(t.Context(), execProbeSpec("cat", "$(FILE)", "$(OTHER)"), target)
	require.NoError(t, err)
	assert.Equal(t, [][]string{{"cat", "/tmp/healthy", "$(OTHER)"}}, got)
}

func TestRunExecTimeoutIsTheProbes(t *testing.T) {
	var deadline context.Context
	exec := func(ctx context.Context, _ []string) ([]byte, int, error) {
		deadline = ctx
		return nil, 0, nil
	}
	p := execProbeSpec("check")
	p.TimeoutSeconds = 7
	before := time.Now()
	_, _, err := Run(t.Context(), p, Target{Exec: exec})
	require.NoError(t, err)
	d, ok := deadline.Deadline()
	require.True(t, ok, "the command gets the probe's timeout as its deadline")
	assert.WithinDuration(t, before.Add(7*time.Second), d, time.Second)
}
