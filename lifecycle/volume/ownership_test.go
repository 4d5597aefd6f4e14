package volume

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vk-static/vk-static/lifecycle/env"
)

const testFSGroup = 1234

// requireRoot skips a test that gives files to other users and groups.
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("changing a file's group to one the agent is not in needs root")
	}
}

// owner is the uid, gid and full mode of p, not following a symlink.
func owner(t *testing.T, p string) (uid, gid int64, mode fs.FileMode) {
	t.Helper()
	info, err := os.Lstat(p)
	require.NoError(t, err)
	st := info.Sys().(*syscall.Stat_t)
	return int64(st.Uid), int64(st.Gid), info.Mode()
}

// assertFSGroup checks every entry of the volume at dir as the kubelet's SetVolumeOwnership
// leaves it: group fsGroup; directories setgid with group search and the mask; files with the
// mask's bits.
func assertFSGroup(t *testing.T, dir string, mask fs.FileMode) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		_, gid, mode := owner(t, p)
		assert.EqualValues(t, testFSGroup, gid, "group of %s", p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
		case d.IsDir():
			assert.NotZero(t, mode&fs.ModeSetgid, "%s is setgid (%v)", p, mode)
			assert.Equal(t, mask|execMask, mode.Perm()&(mask|execMask), "%s mode %v", p, mode)
		default:
			assert.Equal(t, mask, mode.Perm()&mask, "%s mode %v", p, mode)
		}
		return nil
	}))
}

func fsGroupPod(volumes ...corev1.Volume) *corev1.Pod {
	pod := testPod(volumes...)
	pod.Spec.SecurityContext = &corev1.PodSecurityContext{FSGroup: ptr(int64(testFSGroup)), RunAsUser: ptr(int64(1000))}
	return pod
}

// The e2e specs "as non-root with defaultMode and fsGroup set": a 0440 (or 0400) file of a
// configMap, secret, downwardAPI or projected volume is the fsGroup's and group-readable, so a
// non-root container with the fsGroup as a supplementary group reads it.
func TestFSGroupOnReadOnlyVolumes(t *testing.T) {
	requireRoot(t)
	te := newTestEnv(t, Config{}, configMap("cfg", map[string]string{"data-1": "value-1"}), secret("creds", map[string]string{"data-1": "s"}))
	cmRef := corev1.LocalObjectReference{Name: "cfg"}
	pod := fsGroupPod(
		vol("conf", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: cmRef, DefaultMode: ptr(int32(0o400)),
			Items: []corev1.KeyToPath{{Key: "data-1", Path: "path/to/data-1"}}}}),
		vol("creds", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds", DefaultMode: ptr(int32(0o440))}}),
		vol("info", corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
			{Path: "podname", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}, Mode: ptr(int32(0o600))}}}}),
		vol("all", corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{DefaultMode: ptr(int32(0o644)), Sources: []corev1.VolumeProjection{
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: cmRef}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{
				{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}}}}},
		}}}),
	)
	vols, _ := setup(t, te, pod)

	for _, name := range []string{"conf", "creds", "info", "all"} {
		assertFSGroup(t, vols[name], roMask)
	}
	// The mask is added to the asked mode, never replacing it.
	assert.Equal(t, fs.FileMode(0o440), mode(t, filepath.Join(vols["conf"], "path/to/data-1")))
	assert.Equal(t, fs.FileMode(0o440), mode(t, filepath.Join(vols["creds"], "data-1")))
	assert.Equal(t, fs.FileMode(0o640), mode(t, filepath.Join(vols["info"], "podname")))
	assert.Equal(t, fs.FileMode(0o644), mode(t, filepath.Join(vols["all"], "data-1")))
	_, _, rootMode := owner(t, vols["conf"])
	assert.Equal(t, fs.ModeDir|fs.ModeSetgid|0o777, rootMode, "the volume's own directory")

	// Nothing changed: no new version, although the modes on disk are not the asked ones.
	before := tsDirs(t, vols["conf"])
	te.clock.Step(time.Minute)
	changed, err := te.m.Refresh(context.Background(), pod, env.PodFacts{}, nil)
	require.NoError(t, err)
	assert.False(t, changed, "the fsGroup's bits are not a change")
	assert.Equal(t, before, tsDirs(t, vols["conf"]))

	// A new version (a refresh) is the fsGroup's before it is published.
	pod.Labels["tier"] = "back"
	changed, err = te.m.Refresh(context.Background(), pod, env.PodFacts{}, nil)
	require.NoError(t, err)
	assert.True(t, changed)
	assert.Contains(t, readFile(t, filepath.Join(vols["all"], "labels")), `tier="back"`)
	assertFSGroup(t, vols["all"], roMask)
}

// Without an fsGroup, files keep the agent's group and exactly the asked modes.
func TestNoFSGroupChangesNothing(t *testing.T) {
	te := newTestEnv(t, Config{})
	pod := testPod(
		vol("info", corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{DefaultMode: ptr(int32(0o400)), Items: []corev1.DownwardAPIVolumeFile{
			{Path: "podname", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}}),
		vol("scratch", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}),
	)
	vols, _ := setup(t, te, pod)
	_, gid, m := owner(t, filepath.Join(vols["info"], dataDirName, "podname"))
	assert.EqualValues(t, os.Getegid(), gid)
	assert.Equal(t, fs.FileMode(0o400), m)
	_, _, m = owner(t, vols["scratch"])
	assert.Equal(t, fs.ModeDir|0o777, m)
}

// The e2e specs "new files should be created with FSGroup ownership" and "nonexistent volume
// subPath should have the correct mode and owner using FSGroup": an emptyDir is the group's,
// rwx and setgid, and so is a subPath directory made in it.
func TestFSGroupOnEmptyDir(t *testing.T) {
	requireRoot(t)
	te := newTestEnv(t, Config{})
	pod := fsGroupPod(vol("scratch", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}))
	vols, _ := setup(t, te, pod)
	dir := vols["scratch"]
	uid, gid, m := owner(t, dir)
	assert.EqualValues(t, 0, uid)
	assert.EqualValues(t, testFSGroup, gid)
	assert.Equal(t, fs.ModeDir|fs.ModeSetgid|0o777, m)

	// What a container creates is the group's (the kernel's setgid rule).
	require.NoError(t, os.WriteFile(filepath.Join(dir, "new"), nil, 0o600))
	_, gid, _ = owner(t, filepath.Join(dir, "new"))
	assert.EqualValues(t, testFSGroup, gid)

	c := &corev1.Container{Name: "app", VolumeMounts: []corev1.VolumeMount{{Name: "scratch", MountPath: "/test-volume", SubPath: "test-sub"}}}
	mounts, err := te.m.Mounts(pod, c, vols, nil)
	require.NoError(t, err)
	_, gid, m = owner(t, mounts[0].HostPath)
	assert.EqualValues(t, testFSGroup, gid)
	assert.Equal(t, fs.ModeDir|fs.ModeSetgid|0o777, m, "dgrwxrwxrwx, as the kubelet's")

	// Setup again (an agent restart) leaves what containers did alone: the root shows the
	// fsGroup already.
	_, _, err = te.m.Setup(context.Background(), pod, env.PodFacts{}, nil)
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o600), mode(t, filepath.Join(dir, "new")), "not made group rw again")
}

// The e2e spec's emptyDir on tmpfs: the mount's own root is 1777, and keeps its sticky bit.
func TestFSGroupOnMemoryEmptyDir(t *testing.T) {
	requireRoot(t)
	te := newTestEnv(t, Config{CanMount: true})
	pod := fsGroupPod(vol("fast", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}))
	vols, _ := setup(t, te, pod)
	_, gid, m := owner(t, vols["fast"])
	assert.EqualValues(t, testFSGroup, gid)
	assert.Equal(t, fs.ModeDir|fs.ModeSetgid|fs.ModeSticky|0o777, m)
}

// A projected token is 0600 and the fsUser's once the pod has an fsGroup or an fsUser, with
// the fsGroup's group read added: 0640.
func TestFSGroupOnServiceAccountToken(t *testing.T) {
	requireRoot(t)
	tests := []struct {
		name     string
		sc       *corev1.PodSecurityContext
		wantMode fs.FileMode
		wantUID  int64
		wantGID  int64
	}{
		{"neither", nil, 0o644, 0, 0},
		{"fsGroup", &corev1.PodSecurityContext{FSGroup: ptr(int64(testFSGroup))}, 0o640, 0, testFSGroup},
		{"fsUser", &corev1.PodSecurityContext{RunAsUser: ptr(int64(1000))}, 0o600, 1000, 0},
		{"both", &corev1.PodSecurityContext{RunAsUser: ptr(int64(1000)), FSGroup: ptr(int64(testFSGroup))}, 0o640, 1000, testFSGroup},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			te, _ := newTokenTestEnv(t)
			pod := testPod(kubeAPIAccess(corev1.ServiceAccountTokenProjection{Path: "token"}, ptr(int32(0o644))))
			pod.Spec.SecurityContext = tt.sc
			vols, _ := setup(t, te, pod)
			dir := vols["kube-api-access-x7k2p"]
			uid, gid, m := owner(t, filepath.Join(dir, dataDirName, "token"))
			assert.Equal(t, tt.wantMode, m)
			assert.Equal(t, tt.wantUID, uid)
			assert.Equal(t, tt.wantGID, gid)
			uid, _, _ = owner(t, filepath.Join(dir, "token"))
			assert.Equal(t, tt.wantUID, uid, "the visible link is the fsUser's too")
			assert.Equal(t, fs.FileMode(0o644), mode(t, filepath.Join(dir, "ca.crt")), "only credentials")
		})
	}
}

func TestPodFSUser(t *testing.T) {
	sc := func(u int64) *corev1.SecurityContext { return &corev1.SecurityContext{RunAsUser: ptr(u)} }
	tests := []struct {
		name string
		pod  corev1.PodSpec
		want *int64
	}{
		{"nobody named", corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}}}, nil},
		{"the pod's", corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{RunAsUser: ptr(int64(7))},
			Containers: []corev1.Container{{Name: "a"}, {Name: "b"}}}, ptr(int64(7))},
		{"the containers' own, alike", corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "i", SecurityContext: sc(8)}},
			Containers:     []corev1.Container{{Name: "a", SecurityContext: sc(8)}}}, ptr(int64(8))},
		{"one container overrides the pod's", corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{RunAsUser: ptr(int64(7))},
			Containers: []corev1.Container{{Name: "a"}, {Name: "b", SecurityContext: sc(9)}}}, nil},
		{"one container names none", corev1.PodSpec{
			Containers: []corev1.Container{{Name: "a", SecurityContext: sc(8)}, {Name: "b"}}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: tt.pod}
			assert.Equal(t, tt.want, podFSUser(pod))
		})
	}
}

// The fsGroupChangePolicy OnRootMismatch test, as the kubelet's requiresPermissionChange.
func TestNeedsFSGroup(t *testing.T) {
	requireRoot(t)
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o770))
	assert.True(t, needsFSGroup(dir, testFSGroup, false), "another group")
	require.NoError(t, os.Lchown(dir, -1, testFSGroup))
	assert.True(t, needsFSGroup(dir, testFSGroup, false), "no setgid")
	require.NoError(t, os.Chmod(dir, 0o770|fs.ModeSetgid))
	assert.False(t, needsFSGroup(dir, testFSGroup, false))
	require.NoError(t, os.Chmod(dir, 0o750|fs.ModeSetgid))
	assert.True(t, needsFSGroup(dir, testFSGroup, false), "no group write")
	assert.False(t, needsFSGroup(dir, testFSGroup, true), "read-only needs only group read")
	assert.True(t, needsFSGroup(filepath.Join(dir, "missing"), testFSGroup, false))
}
