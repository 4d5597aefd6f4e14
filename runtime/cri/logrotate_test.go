package cri

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/lifecycle"
)

// A rotation pass over containers of sandboxes this runtime ran lists them once and finds
// each log by its sandbox's log directory: no ContainerStatus per container.
func TestRotateOnceAsksNoContainerStatus(t *testing.T) {
	ctx := context.Background()
	r, rs, _, _ := fakeRuntime(t, Config{LogMaxSize: 10, LogMaxFiles: 3})
	pod := &corev1.Pod{}
	pod.UID, pod.Name, pod.Namespace = "u1", "p", "default"
	pod.Spec.Containers = []corev1.Container{{Name: "main", Image: "img"}}
	logDir := filepath.Join(t.TempDir(), "logs")
	sandboxID, err := r.RunSandbox(ctx, &lifecycle.SandboxConfig{
		PodUID: pod.UID, Namespace: pod.Namespace, Name: pod.Name, HostNetwork: true, LogDirectory: logDir, Pod: pod,
		Labels: map[string]string{lifecycle.LabelPodUID: string(pod.UID)},
	})
	require.NoError(t, err)
	logPath := filepath.Join(logDir, "main", "0.log")
	id, err := r.CreateContainer(ctx, sandboxID, &lifecycle.ContainerConfig{
		Name: "main", Image: "img", LogPath: logPath, Pod: pod, Container: &pod.Spec.Containers[0],
		Labels: map[string]string{lifecycle.LabelPodUID: string(pod.UID), lifecycle.LabelContainerName: "main"},
	})
	require.NoError(t, err)
	require.NoError(t, r.StartContainer(ctx, id))
	require.NoError(t, os.MkdirAll(filepath.Dir(logPath), 0o755))
	require.NoError(t, os.WriteFile(logPath, make([]byte, 100), 0o600))

	before := len(rs.GetCalls())
	require.NoError(t, r.LogRotator().RotateOnce(ctx))
	calls := rs.GetCalls()[before:]
	assert.Equal(t, []string{"ListContainers", "ReopenContainerLog"}, calls)
	rotated, err := filepath.Glob(logPath + ".*")
	require.NoError(t, err)
	assert.Len(t, rotated, 1, "the large log was rotated")
}
