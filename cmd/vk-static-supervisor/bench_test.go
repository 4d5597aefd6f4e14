package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vk-static/vk-static/lifecycle"
	"github.com/vk-static/vk-static/runtime/process"
)

// TestMain lets BenchmarkStart compare with the fallback, the test binary re-executed — it
// links process, lifecycle, node and client-go, as the agent does.
func TestMain(m *testing.M) {
	process.RunSupervisorIfRequested()
	os.Exit(m.Run())
}

// BenchmarkStart is what one container's supervisor costs in CPU, from its start to its exit,
// for a workload that exits at once (true): the small binary against the re-executed one. The
// supervisors are this process's children, so their CPU is its RUSAGE_CHILDREN once reaped.
// Run it without -race:
//
//	go test -run '^$' -bench Start -benchtime 20x ./cmd/vk-static-supervisor
func BenchmarkStart(b *testing.B) {
	bin := buildSupervisor(b)
	for _, bc := range []struct{ name, supervisor string }{
		{name: "vk-static-supervisor", supervisor: bin},
		{name: "reexec", supervisor: ""},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			r, err := process.New(process.Config{StateDir: b.TempDir(), SupervisorPath: bc.supervisor})
			require.NoError(b, err)
			defer r.Close()
			exited := make(chan string, 1)
			r.NotifyContainers(ctx, func(ev lifecycle.ContainerEvent) {
				if ev.Type == lifecycle.ContainerExitedEvent {
					exited <- ev.ContainerID // after the supervisor is reaped
				}
			})
			sb, err := r.RunSandbox(ctx, &lifecycle.SandboxConfig{Namespace: "ns", Name: "bench"})
			require.NoError(b, err)
			before := childrenCPU(b)
			for b.Loop() {
				id, err := r.CreateContainer(ctx, sb, &lifecycle.ContainerConfig{Name: "c", Command: []string{"true"}})
				require.NoError(b, err)
				require.NoError(b, r.StartContainer(ctx, id))
				select {
				case got := <-exited:
					require.Equal(b, id, got)
				case <-time.After(30 * time.Second):
					b.Fatal("the container did not exit")
				}
				require.NoError(b, r.RemoveContainer(ctx, id))
			}
			b.ReportMetric(float64((childrenCPU(b)-before).Microseconds())/1000/float64(b.N), "cpu-ms/start")
		})
	}
}

// childrenCPU is the user and system CPU of this process's reaped children and their own.
func childrenCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func buildSupervisor(tb testing.TB) string {
	tb.Helper()
	bin := filepath.Join(tb.TempDir(), "vk-static-supervisor")
	build := exec.Command(goTool(tb), "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0") // as make build builds it
	build.Stderr = os.Stderr
	require.NoError(tb, build.Run(), "go build")
	return bin
}
