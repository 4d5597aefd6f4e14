package lifecycle

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

// A pod's start costs the runtime one image status and one container status per container
// (the kubelet's image manager asks once per container start; the status read after the
// start is the lifecycle's first look), and no more: the Started event of a container seen
// running, and syncs for other reasons, ask nothing until its Exited event.
func TestPodStartAsksTheRuntimeOncePerContainer(t *testing.T) {
	h, img := newImageHarness(t, nil)
	pod := testPod("calls", corev1.RestartPolicyNever,
		corev1.Container{Name: "web", Image: "local:1", Command: []string{"sleep", "1000"}},
		corev1.Container{Name: "side", Image: "local:1", Command: []string{"sleep", "1000"}},
	)
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	h.eventually(pod.UID, "both running", func(s *corev1.PodStatus) bool {
		return mainState(s, 0).Running != nil && mainState(s, 1).Running != nil
	})
	assert.ElementsMatch(t, []string{"start web#0", "start side#0"}, h.rt.calls())
	assert.Equal(t, 1, h.rt.statusCallsOf("web"), "ContainerStatus calls for web to start")
	assert.Equal(t, 1, h.rt.statusCallsOf("side"), "ContainerStatus calls for side to start")
	img.imu.Lock()
	assert.Equal(t, 2, img.refs, "ImageStatus calls: one per container start")
	img.imu.Unlock()

	// side's exit is read once; web, still watched, is not asked again by that sync.
	h.rt.exit(h.rt.running("side"), 0)
	h.eventually(pod.UID, "side terminated", func(s *corev1.PodStatus) bool { return mainState(s, 1).Terminated != nil })
	assert.Equal(t, 2, h.rt.statusCallsOf("side"), "ContainerStatus calls for side after its exit")
	assert.Equal(t, 1, h.rt.statusCallsOf("web"), "ContainerStatus calls for web after side's exit")

	// web's exit still comes through.
	h.rt.exit(h.rt.running("web"), 3)
	h.eventually(pod.UID, "web terminated", func(s *corev1.PodStatus) bool {
		return mainState(s, 0).Terminated != nil && mainState(s, 0).Terminated.ExitCode == 3
	})
}
