package cri

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vk-static/vk-static/lifecycle"
)

// The sandbox's runtime handler (its RuntimeClass's) is RunPodSandbox's runtime_handler, as
// the kubelet passes it; the default handler is the empty one.
func TestRunSandboxPassesTheRuntimeHandler(t *testing.T) {
	ctx := context.Background()
	r, rs, _, _ := fakeRuntime(t, Config{})
	for _, handler := range []string{"kata", ""} {
		pod := &corev1.Pod{}
		pod.UID, pod.Name, pod.Namespace = types.UID("u-"+handler), "p-"+handler, "default"
		id, err := r.RunSandbox(ctx, &lifecycle.SandboxConfig{
			PodUID: pod.UID, Namespace: pod.Namespace, Name: pod.Name, HostNetwork: true, Pod: pod,
			LogDirectory: filepath.Join(t.TempDir(), "logs"), RuntimeHandler: handler,
		})
		require.NoError(t, err)
		rs.Lock()
		sb := rs.Sandboxes[id]
		rs.Unlock()
		require.NotNil(t, sb, "sandbox %s", id)
		assert.Equal(t, handler, sb.RuntimeHandler, "the handler RunPodSandbox got")
	}
}
