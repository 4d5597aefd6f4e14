package process

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vk-static/vk-static/lifecycle"
	"github.com/vk-static/vk-static/provider"
)

// admitAll is the runtime without its admission: what the lifecycle would run if Admit let
// every pod through.
type admitAll struct{ *Runtime }

func (admitAll) Admit(*corev1.Pod) error { return nil }

// An API pod that asks for supplementalGroups [0] reads a root:root 0640 file — as it would
// every pod's secrets and tokens under --root-dir — though it runs as nobody: the lifecycle
// gives the runtime the pod's groups as they are, and the supervisor calls setgroups with
// them. So the runtime's Admit, which the lifecycle calls as it takes a pod (CreatePod), must
// refuse the pod. Run through the lifecycle with Admit bypassed, the container reads the file
// with group 0 and not without; with the runtime as it is, the pod is refused before anything
// runs.
func TestAdmitRefusesGroupRootToAPIPods(t *testing.T) {
	requireRoot(t)
	// Not under t.TempDir, whose parent is 0700, which nobody cannot pass, nor under /tmp,
	// which an API pod's container may get a private one of.
	dir, err := os.MkdirTemp("/run", "vk-static-test-group-root")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	secret := filepath.Join(dir, "token")
	require.NoError(t, os.WriteFile(secret, []byte("top secret\n"), 0o640))
	require.NoError(t, os.Chmod(secret, 0o640))
	require.NoError(t, os.Lchown(secret, 0, 0))

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "reader", Namespace: "ns", UID: "uid-reader"},
		Spec: corev1.PodSpec{
			RestartPolicy:   corev1.RestartPolicyNever,
			SecurityContext: &corev1.PodSecurityContext{SupplementalGroups: []int64{0}},
			Containers:      []corev1.Container{{Name: "c", Image: "busybox", Command: []string{"/bin/cat", secret}}},
		},
	}

	// Admit bypassed: nobody reads the file with group 0, and only with it.
	for _, tc := range []struct {
		groups []int64
		phase  corev1.PodPhase
		log    string
	}{
		{[]int64{0}, corev1.PodSucceeded, "top secret\n"},
		{[]int64{1500}, corev1.PodFailed, "Permission denied"},
	} {
		t.Run(fmt.Sprintf("admitted with groups %v", tc.groups), func(t *testing.T) {
			r, err := New(Config{StateDir: t.TempDir(), AllowHostNetwork: true})
			require.NoError(t, err)
			p := runLifecycle(t, admitAll{r})
			pod := pod.DeepCopy()
			pod.Spec.SecurityContext.SupplementalGroups = tc.groups
			require.NoError(t, p.CreatePod(context.Background(), pod))
			require.Eventually(t, func() bool {
				ph := phase(t, p, pod)
				return ph == corev1.PodSucceeded || ph == corev1.PodFailed
			}, waitFor, tick)
			assert.Equal(t, tc.phase, phase(t, p, pod))
			logs, err := p.GetContainerLogs(context.Background(), pod.Namespace, pod.Name, "c", provider.ContainerLogOpts{})
			require.NoError(t, err)
			defer logs.Close()
			read, err := io.ReadAll(logs)
			require.NoError(t, err)
			assert.Contains(t, string(read), tc.log)
		})
	}

	t.Run("refused", func(t *testing.T) {
		r, err := New(Config{StateDir: t.TempDir()})
		require.NoError(t, err)
		p := runLifecycle(t, r)
		require.NoError(t, p.CreatePod(context.Background(), pod.DeepCopy()))
		require.Eventually(t, func() bool { return phase(t, p, pod) == corev1.PodFailed }, waitFor, tick)
		got, err := p.GetPod(context.Background(), pod.Namespace, pod.Name)
		require.NoError(t, err)
		assert.Contains(t, got.Status.Message, "spec.securityContext.supplementalGroups[0]: 0 (root) is not allowed for an API pod (static pods run as their manifest says): start the agent with --process-allow-root")
		require.Len(t, got.Status.ContainerStatuses, 1)
		assert.Empty(t, got.Status.ContainerStatuses[0].ContainerID, "nothing ran")
	})
}

// runLifecycle runs the lifecycle over rt until the test ends, then stops its containers and
// closes it (and rt).
func runLifecycle(t *testing.T, rt lifecycle.Runtime) *lifecycle.Provider {
	t.Helper()
	p, err := lifecycle.New(context.Background(), lifecycle.Config{
		Runtime: rt, RuntimeName: "process", RootDir: t.TempDir(), StopPodsOnExit: true,
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			assert.NoError(t, err)
		case <-time.After(waitFor):
			t.Error("the lifecycle did not stop")
		}
		assert.NoError(t, p.Close())
	})
	return p
}

// phase is the pod's phase, "" when the provider has no pod (an error of the test's): called
// in Eventually's goroutine, where the test cannot stop.
func phase(t *testing.T, p *lifecycle.Provider, pod *corev1.Pod) corev1.PodPhase {
	s, err := p.GetPodStatus(context.Background(), pod.Namespace, pod.Name)
	if !assert.NoError(t, err) {
		return ""
	}
	return s.Phase
}
