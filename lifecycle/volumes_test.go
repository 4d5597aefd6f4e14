package lifecycle

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
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

// gatedObjects serves one config map; while gated, a read waits until the gate opens, so that
// a test can act while a refresh is under way.
type gatedObjects struct {
	fakeObjects
	mu      sync.Mutex
	gate    chan struct{} // nil: reads pass
	entered chan struct{}
}

func (g *gatedObjects) GetConfigMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error) {
	g.mu.Lock()
	gate, entered := g.gate, g.entered
	g.mu.Unlock()
	if gate != nil {
		entered <- struct{}{}
		<-gate
	}
	return g.fakeObjects.GetConfigMap(ctx, namespace, name)
}

// An update that lands while a periodic refresh runs (with the pod as it was) still reaches
// the files on the sync it causes: the refresh that ran with the old pod is not counted as the
// one the update asked for.
func TestUpdateDuringARefreshIsNotLost(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 23, 7, 0, 0, 0, time.UTC))
	rt := newFakeRuntime(clk)
	objects := &gatedObjects{fakeObjects: fakeObjects{configMaps: map[string]*corev1.ConfigMap{
		"cfg": {ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "cfg"}, Data: map[string]string{"k": "v"}}}}}
	root := t.TempDir()
	p, err := New(context.Background(), Config{Runtime: rt, RuntimeName: "fake", Objects: objects, RootDir: root,
		NodeIPs: []string{"127.0.0.1"}, Clock: clk, Recorder: record.NewFakeRecorder(100)})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); assert.NoError(t, p.Run(ctx)) }()

	pod := testPod("u-race", corev1.RestartPolicyAlways, ctr("app", "serve"))
	pod.Labels = map[string]string{"key1": "value1"}
	// The config map first: the refresh reads it, and waits there, before it writes the labels.
	pod.Spec.Volumes = []corev1.Volume{
		{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}},
		{Name: "podinfo", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
			{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}}}}}},
	}
	require.NoError(t, p.CreatePod(context.Background(), pod))
	t.Cleanup(func() {
		cancel()
		<-done
		assert.NoError(t, p.volumes.Teardown(context.Background(), pod.UID))
	})
	require.Eventually(t, func() bool { return rt.running("app") != "" }, 10*time.Second, 5*time.Millisecond)
	labels := filepath.Join(root, "pods", string(pod.UID), "volumes", "kubernetes.io~downward-api/podinfo/labels")
	read := func() string { b, _ := os.ReadFile(labels); return string(b) }
	require.Equal(t, `key1="value1"`, read())

	gate, entered := make(chan struct{}), make(chan struct{}, 1)
	objects.mu.Lock()
	objects.gate, objects.entered = gate, entered
	objects.mu.Unlock()
	require.Eventually(t, clk.HasWaiters, 5*time.Second, time.Millisecond)
	clk.Step(DefaultVolumeRefresh) // the periodic refresh starts, with the pod as it is
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the periodic refresh never read the config map")
	}
	updated := pod.DeepCopy()
	updated.Labels["key3"] = "value3"
	require.NoError(t, p.UpdatePod(context.Background(), updated))
	objects.mu.Lock()
	objects.gate = nil
	objects.mu.Unlock()
	close(gate)

	assert.Eventually(t, func() bool { return read() == "key1=\"value1\"\nkey3=\"value3\"" }, 5*time.Second, 5*time.Millisecond,
		"labels %q: the update was lost to the refresh under way", read())
}
