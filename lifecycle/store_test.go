package lifecycle

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

// CreatePod writes its record after p.mu is released, so a DeletePod's newer record can reach
// the disk first: the older one must then not replace it, or a restarted agent would start the
// deleted pod again.
func TestOlderPodRecordDoesNotReplaceNewer(t *testing.T) {
	h := newHarness(t)
	pod := testPod("order", corev1.RestartPolicyAlways, ctr("app", "sleep"))
	st := &podState{pod: pod.DeepCopy()}

	h.p.mu.Lock()
	created, err := h.p.encodePodLocked(st)
	require.NoError(t, err)
	st.deleting = true
	deleted, err := h.p.encodePodLocked(st)
	h.p.mu.Unlock()
	require.NoError(t, err)

	require.NoError(t, deleted.write())
	require.NoError(t, created.write())
	saved, err := h.p.readSavedPod(string(pod.UID))
	require.NoError(t, err)
	assert.True(t, saved.Deleting, "the deletion's record is kept")
}
