package volume

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vk-static/vk-static/kubeclient/kubeclienttest"
	"github.com/vk-static/vk-static/lifecycle/env"
	"github.com/vk-static/vk-static/nodeobjects"
)

func TestWriteAtomicLayout(t *testing.T) {
	dir := t.TempDir()
	changed, err := writeAtomic(context.Background(), dir, payload{
		"top":       {Data: []byte("1"), Mode: 0o644},
		"d/e/inner": {Data: []byte("2"), Mode: 0o600},
	}, testNow, ownership{})
	require.NoError(t, err)
	assert.True(t, changed)

	ts, err := os.Readlink(filepath.Join(dir, dataDirName))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(ts, "..2026_11_23_07_00_00."), ts)
	assert.Equal(t, os.FileMode(0o755), mode(t, filepath.Join(dir, ts)))
	for _, name := range []string{"top", "d"} {
		target, err := os.Readlink(filepath.Join(dir, name))
		require.NoError(t, err)
		assert.Equal(t, "..data/"+name, target)
	}
	assert.Equal(t, "2", readFile(t, filepath.Join(dir, "d/e/inner")))
	assert.Equal(t, []string{ts}, tsDirs(t, dir))
	_, err = os.Lstat(filepath.Join(dir, newDataDirName))
	assert.True(t, os.IsNotExist(err), "no ..data_tmp left")
}

func TestWriteAtomicChanges(t *testing.T) {
	base := payload{"a": {Data: []byte("A"), Mode: 0o644}, "b/c": {Data: []byte("C"), Mode: 0o644}}
	tests := []struct {
		name        string
		next        payload
		wantChanged bool
		gone        []string // user-visible names removed
	}{
		{name: "same content", next: base, wantChanged: false},
		{name: "new data", next: payload{"a": {Data: []byte("A2"), Mode: 0o644}, "b/c": {Data: []byte("C"), Mode: 0o644}}, wantChanged: true},
		{name: "new mode", next: payload{"a": {Data: []byte("A"), Mode: 0o600}, "b/c": {Data: []byte("C"), Mode: 0o644}}, wantChanged: true},
		{name: "a path less", next: payload{"a": {Data: []byte("A"), Mode: 0o644}}, wantChanged: true, gone: []string{"b"}},
		{name: "a path more", next: payload{"a": {Data: []byte("A"), Mode: 0o644}, "b/c": {Data: []byte("C"), Mode: 0o644}, "z": {Mode: 0o644}}, wantChanged: true},
		{name: "empty", next: payload{}, wantChanged: true, gone: []string{"a", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			_, err := writeAtomic(context.Background(), dir, base, testNow, ownership{})
			require.NoError(t, err)
			before := tsDirs(t, dir)

			changed, err := writeAtomic(context.Background(), dir, tt.next, testNow.Add(time.Minute), ownership{})
			require.NoError(t, err)
			assert.Equal(t, tt.wantChanged, changed)
			after := tsDirs(t, dir)
			require.Len(t, after, 1, "one data directory")
			if tt.wantChanged {
				assert.NotEqual(t, before, after)
				assert.True(t, strings.HasPrefix(after[0], "..2026_11_23_07_01_00."), after[0])
			} else {
				assert.Equal(t, before, after, "no new data directory")
			}
			for p, f := range tt.next {
				assert.Equal(t, string(f.Data), readFile(t, filepath.Join(dir, p)))
				assert.Equal(t, f.Mode, mode(t, filepath.Join(dir, p)))
			}
			for _, name := range tt.gone {
				_, err := os.Lstat(filepath.Join(dir, name))
				assert.True(t, os.IsNotExist(err), "%s removed", name)
			}
		})
	}
}

func TestWriteAtomicRecreatesMissingLinksWithoutANewVersion(t *testing.T) {
	dir := t.TempDir()
	files := payload{"a": {Data: []byte("A"), Mode: 0o644}}
	_, err := writeAtomic(context.Background(), dir, files, testNow, ownership{})
	require.NoError(t, err)
	before := tsDirs(t, dir)
	require.NoError(t, os.Remove(filepath.Join(dir, "a")))

	changed, err := writeAtomic(context.Background(), dir, files, testNow, ownership{})
	require.NoError(t, err)
	assert.False(t, changed)
	assert.Equal(t, before, tsDirs(t, dir))
	assert.Equal(t, "A", readFile(t, filepath.Join(dir, "a")))
}

func TestWriteAtomicCleansUpAfterACrash(t *testing.T) {
	dir := t.TempDir()
	_, err := writeAtomic(context.Background(), dir, payload{"a": {Data: []byte("A"), Mode: 0o644}}, testNow, ownership{})
	require.NoError(t, err)
	// A crash between writing a version and publishing it leaves its directory and a
	// ..data_tmp link behind.
	orphan := filepath.Join(dir, "..2026_11_23_06_00_00.123")
	require.NoError(t, os.Mkdir(orphan, 0o755))
	require.NoError(t, os.Symlink(filepath.Base(orphan), filepath.Join(dir, newDataDirName)))

	changed, err := writeAtomic(context.Background(), dir, payload{"a": {Data: []byte("A2"), Mode: 0o644}}, testNow.Add(time.Hour), ownership{})
	require.NoError(t, err)
	assert.True(t, changed)
	assert.Len(t, tsDirs(t, dir), 1)
	assert.NoDirExists(t, orphan)
	assert.Equal(t, "A2", readFile(t, filepath.Join(dir, "a")))
}

func TestWriteAtomicRefusesBadPaths(t *testing.T) {
	for _, p := range []string{"", ".", "./", "/abs", "../up", "a/../../up", "..data", "..hidden/x", strings.Repeat("x", 256)} {
		dir := t.TempDir()
		_, err := writeAtomic(context.Background(), dir, payload{p: {Data: []byte("x"), Mode: 0o644}}, testNow, ownership{})
		assert.Error(t, err, "path %q", p)
		entries, _ := os.ReadDir(dir)
		assert.Empty(t, entries, "nothing written for %q", p)
	}
}

// The update is seen through the user-visible names: a reader that follows "conf/app.yaml"
// reads the old content before Refresh and the new one after, through the same path, and the
// directory reached through the "conf" link changes with ..data as a whole.
func TestRefreshIsAtomicThroughTheVisibleDirectory(t *testing.T) {
	cm := configMap("cfg", map[string]string{"app.yaml": "v: 1", "other": "o1"})
	te := newTestEnv(t, Config{}, cm)
	pod := testPod(vol("conf", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"},
		Items:                []corev1.KeyToPath{{Key: "app.yaml", Path: "conf/app.yaml"}, {Key: "other", Path: "conf/other"}},
	}}))
	vols, _ := setup(t, te, pod)
	dir := vols["conf"]
	visibleDir := filepath.Join(dir, "conf")

	assert.Equal(t, "v: 1", readFile(t, filepath.Join(visibleDir, "app.yaml")))
	oldResolved, err := filepath.EvalSymlinks(visibleDir)
	require.NoError(t, err)
	// A reader holding a file open keeps reading the version it opened.
	held, err := os.Open(filepath.Join(visibleDir, "app.yaml"))
	require.NoError(t, err)
	defer held.Close()

	cm.Data = map[string]string{"app.yaml": "v: 2", "other": "o2"}
	_, err = te.client.CoreV1().ConfigMaps("ns").Update(context.Background(), cm, metav1.UpdateOptions{})
	require.NoError(t, err)
	te.clock.Step(time.Minute)
	changed, err := te.m.Refresh(context.Background(), pod, env.PodFacts{}, nil)
	require.NoError(t, err)
	assert.True(t, changed)

	assert.Equal(t, "v: 2", readFile(t, filepath.Join(visibleDir, "app.yaml")))
	assert.Equal(t, "o2", readFile(t, filepath.Join(visibleDir, "other")))
	newResolved, err := filepath.EvalSymlinks(visibleDir)
	require.NoError(t, err)
	assert.NotEqual(t, oldResolved, newResolved, "the visible directory is a new version as a whole")
	assert.NoDirExists(t, oldResolved, "the old version is removed")
	buf := make([]byte, 16)
	n, err := held.Read(buf)
	require.NoError(t, err)
	assert.Equal(t, "v: 1", string(buf[:n]))
}

func TestRefreshIsANoOpWhenNothingChanged(t *testing.T) {
	te := newTestEnv(t, Config{},
		configMap("cfg", map[string]string{"a": "A"}), secret("creds", map[string]string{"u": "U"}))
	pod := testPod(
		vol("conf", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}),
		vol("creds", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds"}}),
		vol("info", corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
			{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}}}}}),
		vol("scratch", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}),
	)
	vols, _ := setup(t, te, pod)
	before := map[string][]string{}
	for _, name := range []string{"conf", "creds", "info"} {
		before[name] = tsDirs(t, vols[name])
	}

	te.clock.Step(time.Minute) // a new version would get a new name
	changed, err := te.m.Refresh(context.Background(), pod, env.PodFacts{}, nil)
	require.NoError(t, err)
	assert.False(t, changed)
	for name, dirs := range before {
		assert.Equal(t, dirs, tsDirs(t, vols[name]), "%s: no new data directory", name)
	}

	// A label change reaches the downwardAPI volume, and only it.
	pod.Labels["tier"] = "back"
	changed, err = te.m.Refresh(context.Background(), pod, env.PodFacts{}, nil)
	require.NoError(t, err)
	assert.True(t, changed)
	assert.Equal(t, "app=\"web\"\ntier=\"back\"", readFile(t, filepath.Join(vols["info"], "labels")))
	assert.NotEqual(t, before["info"], tsDirs(t, vols["info"]))
	assert.Equal(t, before["conf"], tsDirs(t, vols["conf"]))
}

func TestRefreshOptionalObjectAppearsAndGoes(t *testing.T) {
	te := newTestEnv(t, Config{})
	pod := testPod(vol("conf", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: "late"}, Optional: ptr(true)}}))
	vols, _ := setup(t, te, pod)
	onlyReserved(t, vols["conf"])

	ctx := context.Background()
	_, err := te.client.CoreV1().ConfigMaps("ns").Create(ctx, configMap("late", map[string]string{"k": "v"}), metav1.CreateOptions{})
	require.NoError(t, err)
	changed, err := te.m.Refresh(ctx, pod, env.PodFacts{}, nil)
	require.NoError(t, err)
	assert.True(t, changed)
	assert.Equal(t, "v", readFile(t, filepath.Join(vols["conf"], "k")))

	require.NoError(t, te.client.CoreV1().ConfigMaps("ns").Delete(ctx, "late", metav1.DeleteOptions{}))
	changed, err = te.m.Refresh(ctx, pod, env.PodFacts{}, nil)
	require.NoError(t, err)
	assert.True(t, changed)
	onlyReserved(t, vols["conf"])
}

func TestRefreshKeepsTheFilesWhenTheObjectIsGone(t *testing.T) {
	te := newTestEnv(t, Config{}, configMap("cfg", map[string]string{"a": "A"}))
	pod := testPod(vol("conf", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}))
	vols, _ := setup(t, te, pod)
	ctx := context.Background()
	require.NoError(t, te.client.CoreV1().ConfigMaps("ns").Delete(ctx, "cfg", metav1.DeleteOptions{}))

	changed, err := te.m.Refresh(ctx, pod, env.PodFacts{}, nil)
	var me *MissingObjectError
	require.ErrorAs(t, err, &me)
	assert.False(t, changed)
	assert.Equal(t, "A", readFile(t, filepath.Join(vols["conf"], "a")))

	// Setup after an agent restart keeps them too, with a warning instead of an error.
	m2, err := New(Config{PodsDir: te.podsDir, Objects: nodeobjects.NewClientGetter(kubeclienttest.Wrap(te.client))})
	require.NoError(t, err)
	vols2, warnings, err := m2.Setup(ctx, pod, env.PodFacts{}, nil)
	require.NoError(t, err)
	assert.Equal(t, vols, vols2)
	require.Len(t, warnings, 1)
	assert.Contains(t, warnings[0], "spec.volumes[0] (conf): keeping the files already on the node: spec.volumes[0].configMap: ConfigMap ns/cfg not found")
	assert.Equal(t, "A", readFile(t, filepath.Join(vols["conf"], "a")))
}
