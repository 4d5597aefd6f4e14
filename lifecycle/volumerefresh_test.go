package lifecycle

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

// The e2e specs "Downward API volume should update labels on modification" and "...annotations
// on modification" (and their projected twins): an API pod's new labels and annotations reach
// its downwardAPI files on the sync the update causes, as the kubelet's syncPod re-runs its
// volume manager for the updated pod — not a refresh period later.
func TestUpdatedMetadataReachesDownwardAPIVolumes(t *testing.T) {
	h := newHarness(t)
	pod := testPod("u-dw", corev1.RestartPolicyAlways, ctr("app", "serve"))
	pod.Labels = map[string]string{"key1": "value1"}
	pod.Annotations = map[string]string{"builder": "bar"}
	items := []corev1.DownwardAPIVolumeFile{
		{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}},
		{Path: "annotations", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations"}},
	}
	pod.Spec.Volumes = []corev1.Volume{
		{Name: "podinfo", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: items}}},
		{Name: "projected", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: items}}}}}},
	}
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	// As root the downwardAPI volumes are tmpfs mounts, which the test's directory must lose.
	t.Cleanup(func() {
		h.stop()
		assert.NoError(t, h.p.volumes.Teardown(context.Background(), pod.UID))
	})
	h.eventually(pod.UID, "running", func(s *corev1.PodStatus) bool { return mainState(s, 0).Running != nil })

	volumes := filepath.Join(h.root, "pods", string(pod.UID), "volumes")
	files := []string{
		filepath.Join(volumes, "kubernetes.io~downward-api/podinfo"),
		filepath.Join(volumes, "kubernetes.io~projected/projected"),
	}
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			return err.Error()
		}
		return string(b)
	}
	for _, dir := range files {
		assert.Equal(t, `key1="value1"`, read(filepath.Join(dir, "labels")))
		assert.Equal(t, `builder="bar"`, read(filepath.Join(dir, "annotations")))
	}

	// Well inside the refresh period, so that only the update can explain a new version.
	h.clock.Step(time.Second)
	updated := pod.DeepCopy()
	updated.Labels["key3"] = "value3"
	updated.Annotations["builder"] = "foo"
	require.NoError(t, h.p.UpdatePod(context.Background(), updated))
	for _, dir := range files {
		assert.Eventually(t, func() bool {
			return read(filepath.Join(dir, "labels")) == "key1=\"value1\"\nkey3=\"value3\"" &&
				read(filepath.Join(dir, "annotations")) == `builder="foo"`
		}, 5*time.Second, 5*time.Millisecond, "%s: labels %q, annotations %q", dir,
			read(filepath.Join(dir, "labels")), read(filepath.Join(dir, "annotations")))
	}
}
