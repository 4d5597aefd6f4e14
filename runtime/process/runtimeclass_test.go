package process

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/lifecycle"
)

// A sandbox whose RuntimeClass has a handler is refused, naming the handler and the
// RuntimeClass, before anything is made; the default handler runs.
func TestRunSandboxRefusesARuntimeHandler(t *testing.T) {
	r := newTestRuntime(t, Config{})
	ctx := context.Background()
	pod := &corev1.Pod{}
	pod.UID, pod.Namespace, pod.Name = "u", "ns", "p"
	pod.Spec.RuntimeClassName = ptr.To("kata-rc")
	_, err := r.RunSandbox(ctx, &lifecycle.SandboxConfig{PodUID: pod.UID, Namespace: "ns", Name: "p", Pod: pod, RuntimeHandler: "kata"})
	require.Error(t, err)
	assert.Equal(t, `runtime handler "kata" of RuntimeClass "kata-rc" is not configured: the process provider has no runtime handlers, only the default (empty) one`, err.Error())
	list, err := r.ListSandboxes(ctx)
	require.NoError(t, err)
	assert.Empty(t, list, "nothing made")
	entries, err := os.ReadDir(r.sandboxDir(""))
	if err == nil {
		assert.Empty(t, entries, "no sandbox directory left")
	}

	pod.Spec.RuntimeClassName = nil
	id, err := r.RunSandbox(ctx, &lifecycle.SandboxConfig{PodUID: pod.UID, Namespace: "ns", Name: "p", Pod: pod})
	require.NoError(t, err, "the default handler")
	require.NoError(t, r.StopSandbox(ctx, id))
	require.NoError(t, r.RemoveSandbox(ctx, id))
}
