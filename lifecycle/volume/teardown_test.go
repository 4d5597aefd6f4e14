package volume

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/lifecycle/env"
)

func TestTeardownRemovesEverythingAndFollowsNoLink(t *testing.T) {
	hostDir := t.TempDir()
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(hostDir, "keep"), []byte("host"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "precious"), []byte("p"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(outside, "dir"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "dir/inside"), []byte("i"), 0o644))

	te := newTestEnv(t, Config{AllowedHostPaths: []string{hostDir}}, configMap("cfg", map[string]string{"a": "A"}))
	pod := testPod(
		vol("scratch", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}),
		vol("conf", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}),
		vol("host", corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: hostDir}}),
	)
	ctx := context.Background()
	vols, _, err := te.m.Setup(ctx, pod, env.PodFacts{}, nil)
	require.NoError(t, err)

	scratch := vols["scratch"]
	require.NoError(t, os.MkdirAll(filepath.Join(scratch, "a/b"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(scratch, "a/b/c"), []byte("c"), 0o644))
	require.NoError(t, os.Chmod(filepath.Join(scratch, "a/b"), 0o500)) // a container's read-only directory
	// Links a container could plant, to a directory and a file outside, and to the hostPath.
	require.NoError(t, os.Symlink(outside, filepath.Join(scratch, "to-outside")))
	require.NoError(t, os.Symlink(filepath.Join(outside, "dir"), filepath.Join(scratch, "a/to-dir")))
	require.NoError(t, os.Symlink(filepath.Join(outside, "precious"), filepath.Join(scratch, "to-file")))
	require.NoError(t, os.Symlink(hostDir, filepath.Join(scratch, "to-host")))

	require.NoError(t, te.m.Teardown(ctx, pod.UID))

	_, err = os.Lstat(filepath.Join(te.podsDir, "uid-1", "volumes"))
	assert.True(t, os.IsNotExist(err), "the volumes directory is gone")
	assert.DirExists(t, filepath.Join(te.podsDir, "uid-1"), "the pod directory is not Teardown's")
	assert.Equal(t, "p", readFile(t, filepath.Join(outside, "precious")))
	assert.Equal(t, "i", readFile(t, filepath.Join(outside, "dir/inside")))
	assert.Equal(t, "host", readFile(t, filepath.Join(hostDir, "keep")))

	// Again, and for a pod that never had volumes: nothing to do.
	require.NoError(t, te.m.Teardown(ctx, pod.UID))
	require.NoError(t, te.m.Teardown(ctx, "never-seen"))
}

func TestTeardownRefusesAVolumesDirectoryThatIsALink(t *testing.T) {
	te := newTestEnv(t, Config{})
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "precious"), nil, 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(te.podsDir, "uid-1"), 0o750))
	require.NoError(t, os.Symlink(outside, filepath.Join(te.podsDir, "uid-1", "volumes")))

	err := te.m.Teardown(context.Background(), "uid-1")
	assert.ErrorContains(t, err, "is not a directory")
	assert.FileExists(t, filepath.Join(outside, "precious"))
}

// requireMount skips a test that needs to mount tmpfs: only root in the initial user
// namespace (CAP_SYS_ADMIN) may, and the package mounts nothing else.
func requireMount(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting tmpfs needs root; running as uid", os.Geteuid())
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("mounting tmpfs is not permitted here (a user namespace or no CAP_SYS_ADMIN): %v", err)
	}
	require.NoError(t, syscall.Unmount(dir, 0))
}

func TestEmptyDirMemoryIsTmpfs(t *testing.T) {
	requireMount(t)
	te := newTestEnv(t, Config{CanMount: true}, secret("creds", map[string]string{"u": "U"}))
	pod := testPod(
		vol("fast", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: ptr(resourceQuantity("8Mi"))}}),
		vol("creds", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds"}}),
	)
	ctx := context.Background()
	vols, warnings, err := te.m.Setup(ctx, pod, env.PodFacts{}, corev1.ResourceList{corev1.ResourceMemory: resourceQuantity("1Gi")})
	require.NoError(t, err)
	assert.Empty(t, warnings)
	t.Cleanup(func() { _ = te.m.Teardown(ctx, pod.UID) })

	for _, name := range []string{"fast", "creds"} {
		fsType, err := mountedAt(vols[name])
		require.NoError(t, err)
		assert.Equal(t, "tmpfs", fsType, name)
	}
	var st syscall.Statfs_t
	require.NoError(t, syscall.Statfs(vols["fast"], &st))
	assert.Equal(t, int64(8<<20), int64(st.Blocks)*int64(st.Bsize), "size=sizeLimit")
	require.NoError(t, syscall.Statfs(vols["creds"], &st))
	assert.Equal(t, int64(1<<30), int64(st.Blocks)*int64(st.Bsize), "a secret's tmpfs is sized by the node's allocatable memory")

	// Setup again (an agent restart) keeps the mount and its content, and mounts nothing more.
	require.NoError(t, os.WriteFile(filepath.Join(vols["fast"], "state"), []byte("s"), 0o644))
	_, _, err = te.m.Setup(ctx, pod, env.PodFacts{}, nil)
	require.NoError(t, err)
	assert.Equal(t, "s", readFile(t, filepath.Join(vols["fast"], "state")))
	mps, err := mountsUnder(vols["fast"])
	require.NoError(t, err)
	assert.Len(t, mps, 1)

	require.NoError(t, te.m.Teardown(ctx, pod.UID))
	mps, err = mountsUnder(te.m.volumesDir(pod.UID))
	require.NoError(t, err)
	assert.Empty(t, mps, "unmounted")
	assert.NoDirExists(t, te.m.volumesDir(pod.UID))
}

func TestTeardownUnmountsWhatIsMountedInAVolume(t *testing.T) {
	requireMount(t)
	te := newTestEnv(t, Config{CanMount: true})
	pod := testPod(vol("scratch", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}))
	ctx := context.Background()
	vols, _, err := te.m.Setup(ctx, pod, env.PodFacts{}, nil)
	require.NoError(t, err)
	nested := filepath.Join(vols["scratch"], "nested")
	require.NoError(t, os.Mkdir(nested, 0o755))
	require.NoError(t, syscall.Mount("tmpfs", nested, "tmpfs", 0, "size=1m"))
	t.Cleanup(func() { _ = syscall.Unmount(nested, 0) })
	require.NoError(t, os.WriteFile(filepath.Join(nested, "f"), nil, 0o644))

	require.NoError(t, te.m.Teardown(ctx, pod.UID))
	assert.NoDirExists(t, te.m.volumesDir(pod.UID))
}

// removeTree is the second line of defence: a mount Teardown did not undo stops it before it
// deletes what the mount holds.
func TestRemoveTreeStopsAtAMountPoint(t *testing.T) {
	requireMount(t)
	root := t.TempDir()
	mnt := filepath.Join(root, "mnt")
	require.NoError(t, os.Mkdir(mnt, 0o755))
	require.NoError(t, syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=1m"))
	t.Cleanup(func() { _ = syscall.Unmount(mnt, 0) })
	require.NoError(t, os.WriteFile(filepath.Join(mnt, "held"), nil, 0o644))

	info, err := os.Lstat(root)
	require.NoError(t, err)
	dev, ok := deviceOf(info)
	require.True(t, ok)
	err = removeTree(root, dev)
	assert.ErrorContains(t, err, "is a mount point that is still mounted")
	assert.FileExists(t, filepath.Join(mnt, "held"))
}
