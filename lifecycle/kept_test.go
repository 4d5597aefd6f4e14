package lifecycle

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

// A pod's record that cannot be read after a restart (empty after a power loss, corrupt) does
// not make its containers "of no pod": they are kept running, reported, and adopted when the
// pod is created again — nothing is started twice.
func TestUnreadableRecordKeepsItsContainers(t *testing.T) {
	for name, content := range map[string][]byte{"empty": nil, "corrupt": []byte(`{"pod": {"metadata": {"uid": "u`)} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			pod := testPod("kr1", corev1.RestartPolicyAlways, ctr("app", "sleep"), ctr("side", "sleep"))
			other := testPod("kr2", corev1.RestartPolicyAlways, ctr("web", "sleep"))
			for _, p := range []*corev1.Pod{pod, other} {
				require.NoError(t, h.p.CreatePod(context.Background(), p))
				h.eventually(p.UID, "running", func(s *corev1.PodStatus) bool { return mainState(s, 0).Running != nil })
			}
			h.eventually(pod.UID, "both running", func(s *corev1.PodStatus) bool { return mainState(s, 1).Running != nil })
			appID := h.rt.running("app")

			h.stop()
			require.NoError(t, os.WriteFile(filepath.Join(h.root, "pods", string(pod.UID), podFile), content, 0o600))
			h.drainEvents()
			h.start()

			list, err := h.rt.ListContainers(context.Background())
			require.NoError(t, err)
			assert.Len(t, list, 3, "every container kept")
			assert.Equal(t, appID, h.rt.running("app"), "still running")
			sandboxes, _ := h.rt.ListSandboxes(context.Background())
			assert.Len(t, sandboxes, 2, "its sandbox kept")
			pods, err := h.p.GetPods(context.Background())
			require.NoError(t, err)
			require.Len(t, pods, 1, "only the readable pod is known")
			assert.Equal(t, other.UID, pods[0].UID)
			e := h.waitEvent(reasonRecordUnreadable)
			assert.Contains(t, e, "2 container(s) are kept")
			reg := prometheus.NewRegistry()
			newMetrics().register(reg, h.p)
			assert.Equal(t, 1.0, gaugeValue(t, reg, "vk_static_unreadable_pod_records"))

			// The sources create it again: its containers are adopted as they run.
			require.NoError(t, h.p.CreatePod(context.Background(), pod))
			h.eventually(pod.UID, "running, adopted", func(s *corev1.PodStatus) bool {
				return mainState(s, 0).Running != nil && mainState(s, 1).Running != nil
			})
			assert.Equal(t, "fake://"+appID, h.status(pod.UID).ContainerStatuses[0].ContainerID)
			assert.Equal(t, []string{"start app#0", "start side#0", "start web#0"}, h.rt.calls(), "nothing started again")
			assert.Equal(t, 0.0, gaugeValue(t, reg, "vk_static_unreadable_pod_records"))
			_, err = h.p.readSavedPod(string(pod.UID))
			assert.NoError(t, err, "the record is written again")
		})
	}
}

// A pod directory without a readable record whose pod the runtime has nothing of is only
// skipped: there is nothing to keep or report.
func TestUnreadableRecordWithNothingInTheRuntimeIsSkipped(t *testing.T) {
	h := newHarness(t)
	h.stop()
	require.NoError(t, os.MkdirAll(filepath.Join(h.root, "pods", "gone"), 0o750))
	h.start()
	reg := prometheus.NewRegistry()
	newMetrics().register(reg, h.p)
	assert.Equal(t, 0.0, gaugeValue(t, reg, "vk_static_unreadable_pod_records"))
	assert.DirExists(t, filepath.Join(h.root, "pods", "gone"), "left as it is")
}
