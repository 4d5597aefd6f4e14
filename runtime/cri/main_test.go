package cri_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/vk-static/vk-static/lifecycle"
	"github.com/vk-static/vk-static/runtime/cri"
	"github.com/vk-static/vk-static/test/support/testcontainerd"
	"github.com/vk-static/vk-static/test/support/testimage"
)

var cd *testcontainerd.Containerd

func TestMain(m *testing.M) { os.Exit(testcontainerd.Main(m, &cd)) }

// newRuntime is a Runtime on the package's containerd, closed when the test ends.
func newRuntime(t *testing.T, cfg cri.Config) *cri.Runtime {
	t.Helper()
	rt := openRuntime(t, cfg)
	t.Cleanup(func() { _ = rt.Close() })
	return rt
}

// openRuntime is a Runtime on the package's containerd, for a test that gives it to the
// lifecycle, which closes it.
func openRuntime(t *testing.T, cfg cri.Config) *cri.Runtime {
	t.Helper()
	cfg.RuntimeEndpoint = cd.Endpoint()
	rt, err := cri.New(context.Background(), cfg)
	require.NoError(t, err)
	return rt
}

// runLifecycle runs the lifecycle layer over a new Runtime on the package's containerd until
// the test ends; ctx ends with it, and closing the lifecycle then closes the Runtime.
func runLifecycle(t *testing.T) (context.Context, *cri.Runtime, *lifecycle.Provider) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	rt := openRuntime(t, cri.Config{})
	p, err := lifecycle.New(ctx, lifecycle.Config{Runtime: rt, RuntimeName: rt.Name(), RootDir: t.TempDir(), NodeIPs: []string{"127.0.0.1"}})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done; _ = p.Close() })
	return ctx, rt, p
}

// sandboxGone waits until no sandbox of pod uid is left.
func sandboxGone(t *testing.T, ctx context.Context, rt *cri.Runtime, uid types.UID) {
	t.Helper()
	require.Eventually(t, func() bool {
		sandboxes, err := rt.ListSandboxes(ctx)
		if err != nil {
			return false
		}
		for _, s := range sandboxes {
			if s.PodUID == uid {
				return false
			}
		}
		return true
	}, 30*time.Second, 50*time.Millisecond, "the pod's sandbox removed")
}

// importImage builds a workload image running cmd and imports it as ref.
func importImage(t *testing.T, ref string, opts testimage.Options) {
	t.Helper()
	img, err := testimage.Build(opts)
	require.NoError(t, err)
	require.NoError(t, testimage.Import(context.Background(), cd, ref, img))
}

// testPod is a host-network pod with one container of image.
func testPod(name, image string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "test", UID: types.UID(uuid.NewUUID())},
		Spec: corev1.PodSpec{
			HostNetwork: true,
			Containers:  []corev1.Container{{Name: "main", Image: image}},
		},
	}
}

// sandboxFor runs the pod's sandbox, stopped and removed when the test ends (its containers
// first).
func sandboxFor(t *testing.T, rt *cri.Runtime, pod *corev1.Pod) (string, *lifecycle.SandboxConfig) {
	t.Helper()
	ctx := context.Background()
	cfg := &lifecycle.SandboxConfig{
		PodUID: pod.UID, Namespace: pod.Namespace, Name: pod.Name, Hostname: pod.Name,
		HostNetwork: pod.Spec.HostNetwork, LogDirectory: filepath.Join(t.TempDir(), "logs"), Pod: pod,
		Labels: map[string]string{lifecycle.LabelPodUID: string(pod.UID), lifecycle.LabelPodName: pod.Name, lifecycle.LabelPodNamespace: pod.Namespace},
	}
	id, err := rt.RunSandbox(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		cs, err := rt.ListContainers(ctx)
		assert.NoError(t, err)
		for _, c := range cs {
			if c.SandboxID == id {
				assert.NoError(t, rt.StopContainer(ctx, c.ID, 0))
				assert.NoError(t, rt.RemoveContainer(ctx, c.ID))
			}
		}
		assert.NoError(t, rt.StopSandbox(ctx, id))
		assert.NoError(t, rt.RemoveSandbox(ctx, id))
	})
	return id, cfg
}

// containerFor is the lifecycle's config of the pod's first container, attempt 0.
func containerFor(t *testing.T, rt *cri.Runtime, sandbox *lifecycle.SandboxConfig, args ...string) *lifecycle.ContainerConfig {
	t.Helper()
	pod := sandbox.Pod
	c := &pod.Spec.Containers[0]
	ref, err := rt.ImageRef(context.Background(), c.Image)
	require.NoError(t, err)
	require.NotEmpty(t, ref, "image %s present", c.Image)
	return &lifecycle.ContainerConfig{
		Name: c.Name, Image: c.Image, ImageRef: ref, Args: args,
		LogPath: filepath.Join(sandbox.LogDirectory, c.Name, "0.log"),
		Labels: map[string]string{
			lifecycle.LabelPodUID: string(pod.UID), lifecycle.LabelPodName: pod.Name,
			lifecycle.LabelPodNamespace: pod.Namespace, lifecycle.LabelContainerName: c.Name,
		},
		Pod: pod, Container: c,
	}
}

// waitFor polls the container's status until cond holds.
func waitFor(t *testing.T, rt *cri.Runtime, id string, cond func(*lifecycle.ContainerStatus) bool) *lifecycle.ContainerStatus {
	t.Helper()
	var st *lifecycle.ContainerStatus
	require.Eventually(t, func() bool {
		var err error
		st, err = rt.ContainerStatus(context.Background(), id)
		return err == nil && cond(st)
	}, 20*time.Second, 20*time.Millisecond, "container %s: last status %+v", id, st)
	return st
}

// waitForLog waits until the file holds want.
func waitForLog(t *testing.T, path, want string) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		data, err := os.ReadFile(path)
		require.NoError(c, err)
		assert.Contains(c, string(data), want)
	}, 10*time.Second, 20*time.Millisecond, "log %s", path)
}

// listedContainer is the container id as ListContainers reports it, nil if it does not.
func listedContainer(t *testing.T, rt *cri.Runtime, id string) *lifecycle.ContainerStatus {
	t.Helper()
	list, err := rt.ListContainers(context.Background())
	require.NoError(t, err)
	for _, c := range list {
		if c.ID == id {
			return c
		}
	}
	return nil
}

// listedSandbox is the sandbox id as ListSandboxes reports it, nil if it does not.
func listedSandbox(t *testing.T, rt *cri.Runtime, id string) *lifecycle.SandboxStatus {
	t.Helper()
	list, err := rt.ListSandboxes(context.Background())
	require.NoError(t, err)
	for _, s := range list {
		if s.ID == id {
			return s
		}
	}
	return nil
}
