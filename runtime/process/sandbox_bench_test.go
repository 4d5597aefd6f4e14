package process

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/vk-static/vk-static/lifecycle"
	"github.com/vk-static/vk-static/podutil"
)

// BenchmarkPodStart is what the sandbox costs a pod's start: RunSandbox, CreateContainer and
// StartContainer of a one-container pod running sleep, until StartContainer returns (the
// workload runs), then its stop and removal (not timed). "trusted" is a static pod, which runs
// as before the sandbox; "restricted" the same pod under --process-restrict-static-pods: its
// namespace holder, the hardened view, the init helper and a PID namespace of its own. The
// supervisor is bin/vk-static-supervisor (make build), as the agent runs it, else this binary.
// One run measures both, one after the other: for rounds, run it again (-count would run
// each kind's rounds together, and they would not pair).
func BenchmarkPodStart(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root")
	}
	supervisor, _ := filepath.Abs("../../bin/vk-static-supervisor")
	if _, err := os.Stat(supervisor); err != nil {
		supervisor = ""
	}
	for _, kind := range []struct {
		name string
		cfg  Config
	}{{"trusted", Config{}}, {"restricted", Config{RestrictStaticPods: true}}} {
		b.Run(kind.name, func(b *testing.B) {
			kind.cfg.StateDir, kind.cfg.AllowHostNetwork, kind.cfg.SupervisorPath = b.TempDir(), true, supervisor
			r, err := New(kind.cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			ctx := context.Background()
			pod := restrictedPod("bench", map[string]string{podutil.ConfigSourceAnnotationKey: podutil.FileSource})
			c := &pod.Spec.Containers[0]
			log := filepath.Join(b.TempDir(), "c.log")
			b.ResetTimer()
			for range b.N {
				sb, err := r.RunSandbox(ctx, &lifecycle.SandboxConfig{PodUID: pod.UID, Namespace: pod.Namespace, Name: pod.Name, Pod: pod})
				if err != nil {
					b.Fatal(err)
				}
				id, err := r.CreateContainer(ctx, sb, &lifecycle.ContainerConfig{Name: c.Name, Command: []string{"sleep", "1000"},
					Env: []string{testPath}, LogPath: log, User: &lifecycle.User{UID: 65534, GID: -1}, Pod: pod, Container: c})
				if err != nil {
					b.Fatal(err)
				}
				if err := r.StartContainer(ctx, id); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				stopPod(b, r, sb, id)
				b.StartTimer()
			}
		})
	}
}

func stopPod(b *testing.B, r *Runtime, sandboxID, id string) {
	ctx := context.Background()
	for _, err := range []error{r.StopContainer(ctx, id, 0), r.RemoveContainer(ctx, id), r.StopSandbox(ctx, sandboxID), r.RemoveSandbox(ctx, sandboxID)} {
		if err != nil {
			b.Fatal(err)
		}
	}
}
