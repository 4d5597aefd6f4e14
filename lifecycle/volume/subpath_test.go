package volume

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
)

// subPathPod is a pod with an emptyDir "scratch" set up, and a directory "sub" in it holding
// a file "inside", and a file "file": what a container mounts with subPath.
func subPathPod(t *testing.T) (*testEnv, *corev1.Pod, Volumes) {
	t.Helper()
	requireMount(t)
	te := newTestEnv(t, Config{CanMount: true})
	pod := testPod(vol("scratch", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}))
	vols, _ := setup(t, te, pod)
	require.NoError(t, os.Mkdir(filepath.Join(vols["scratch"], "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(vols["scratch"], "sub", "inside"), []byte("in"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(vols["scratch"], "file"), []byte("in"), 0o644))
	return te, pod, vols
}

// outsideDir is a directory outside every volume, holding a file "outside": where a sibling
// container's symlink points (the test's stand-in for /).
func outsideDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "outside"), []byte("out"), 0o644))
	return dir
}

func subPathContainer(name, subPath string) *corev1.Container {
	return &corev1.Container{Name: name, VolumeMounts: []corev1.VolumeMount{{Name: "scratch", MountPath: "/mnt", SubPath: subPath}}}
}

func stat(t *testing.T, p string) os.FileInfo {
	t.Helper()
	info, err := os.Stat(p)
	require.NoError(t, err)
	return info
}

// CVE-2017-1002101: a container that shares the volume swaps the checked subPath for a
// symlink to / after the agent checked it and before the runtime mounts it. What Mounts returns
// is the file or directory that was checked, whatever is at its name afterwards.
func TestSubPathSurvivesASwap(t *testing.T) {
	for _, subPath := range []string{"sub", "file"} {
		t.Run(subPath, func(t *testing.T) {
			te, pod, vols := subPathPod(t)
			outside := outsideDir(t)
			name := filepath.Join(vols["scratch"], subPath)
			before := stat(t, name)

			mounts, err := te.m.Mounts(pod, subPathContainer("app", subPath), vols, nil)
			require.NoError(t, err)
			require.Len(t, mounts, 1)
			assert.True(t, mounts[0].SubPath)

			// The sibling container's move.
			require.NoError(t, os.Rename(name, name+".old"))
			target := outside
			if subPath == "file" {
				target = filepath.Join(outside, "outside")
			}
			require.NoError(t, os.Symlink(target, name))

			assert.True(t, os.SameFile(before, stat(t, mounts[0].HostPath)), "the mount is what was checked, not what the name leads to now")
			assert.False(t, os.SameFile(stat(t, target), stat(t, mounts[0].HostPath)))
			assert.NotContains(t, mounts[0].HostPath, vols["scratch"], "not a path through the volume")
		})
	}
}

// swapper stands in for a sibling container: it exchanges name (a directory) and link (a
// symlink to a directory outside the volume) atomically (renameat2 RENAME_EXCHANGE), so that
// name is always one or the other, as fast as it can, until stopped; stop leaves the symlink
// at name.
func swapper(t *testing.T, name, outside string) (stop func()) {
	t.Helper()
	link := name + ".link"
	require.NoError(t, os.Symlink(outside, link))
	var done atomic.Bool
	var swaps atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !done.Load() {
			if err := unix.Renameat2(unix.AT_FDCWD, name, unix.AT_FDCWD, link, unix.RENAME_EXCHANGE); err != nil {
				t.Errorf("swapping: %v", err)
				return
			}
			// A pause, so that the agent sees each of the two long enough to act on it
			// (in a tight loop one of them tends to win every look).
			time.Sleep(time.Duration(swaps.Add(1)%50) * time.Microsecond)
		}
	}()
	// Under way before the agent starts.
	require.Eventually(t, func() bool { return swaps.Load() > 100 }, 10*time.Second, time.Millisecond)
	return func() {
		done.Store(true)
		wg.Wait()
		if info, err := os.Lstat(name); err == nil && info.Mode()&os.ModeSymlink == 0 {
			require.NoError(t, unix.Renameat2(unix.AT_FDCWD, name, unix.AT_FDCWD, link, unix.RENAME_EXCHANGE))
		}
	}
}

// withoutOpenat2 makes openBeneath meet a kernel without openat2 until the test ends.
func withoutOpenat2(t *testing.T) {
	t.Helper()
	openat2 = func(int, string, *unix.OpenHow) (int, error) { return -1, unix.ENOSYS }
	t.Cleanup(func() { openat2 = unix.Openat2 })
}

// A sibling container keeps swapping the subPath directory with a symlink to a directory
// outside the volume while the agent resolves the subPath, again and again. Every answer is
// the directory inside the volume, or a refusal; never the outside — then, and once the
// symlink is left in place for good.
func TestSubPathRacingSibling(t *testing.T) {
	for _, kernel := range []string{"openat2", "openat walk"} {
		t.Run(kernel, func(t *testing.T) {
			if kernel == "openat walk" {
				withoutOpenat2(t)
			}
			te, pod, vols := subPathPod(t)
			outside := outsideDir(t)
			name := filepath.Join(vols["scratch"], "sub")
			inside := stat(t, name)
			outsideInfo := stat(t, outside)

			stop := swapper(t, name, outside)
			var got []string
			refused := 0
			for i := range 150 {
				// A container of its own each time: a mount of its own each time.
				c := subPathContainer(fmt.Sprintf("c%d", i), "sub")
				p := pod.DeepCopy()
				p.Spec.Containers = []corev1.Container{*c}
				mounts, err := te.m.Mounts(p, c, vols, nil)
				if err != nil {
					// Mostly ErrOutsideVolume; a readlink that met the directory again is
					// refused too (EINVAL), and the next sync tries again.
					assert.ErrorContains(t, err, `spec.containers[0].volumeMounts[0].subPath "sub": `)
					refused++
					continue
				}
				info := stat(t, mounts[0].HostPath)
				if !assert.False(t, os.SameFile(outsideInfo, info), "attempt %d mounts the outside", i) ||
					!assert.True(t, os.SameFile(inside, info), "attempt %d", i) {
					break
				}
				got = append(got, mounts[0].HostPath)
			}
			stop()
			t.Logf("%d mounted, %d refused", len(got), refused)
			require.NotEmpty(t, got, "nothing mounted: the test proves nothing")
			for _, p := range got {
				info := stat(t, p)
				assert.True(t, os.SameFile(inside, info), "%s is no longer the directory inside", p)
				assert.FileExists(t, filepath.Join(p, "inside"))
			}
		})
	}
}

// A missing subPath is created, and a sibling container that swaps its parent for a symlink
// meanwhile does not get it created outside the volume (the kubelet's SafeMakeDir): each
// directory is made beneath the parent opened without following symlinks.
func TestSubPathCreatedOnlyInside(t *testing.T) {
	te, pod, vols := subPathPod(t)
	outside := outsideDir(t)
	name := filepath.Join(vols["scratch"], "sub")
	stop := swapper(t, name, outside)
	made := 0
	for i := range 400 {
		c := subPathContainer(fmt.Sprintf("c%d", i), fmt.Sprintf("sub/new%d", i))
		p := pod.DeepCopy()
		p.Spec.Containers = []corev1.Container{*c}
		if _, err := te.m.Mounts(p, c, vols, nil); err == nil {
			made++
		}
	}
	stop()
	t.Logf("%d made", made)
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{"outside"}, names, "nothing created outside the volume")
}

// A container started again (a restart, an agent restart) gets the same mount point, mounted
// once; when the subPath is another file by then, the mount is replaced, not stacked; a
// subPath that became a file gets a file as mount point.
func TestSubPathMountIsReplacedNotStacked(t *testing.T) {
	te, pod, vols := subPathPod(t)
	name := filepath.Join(vols["scratch"], "sub")
	mountsAt := func(p string) int {
		t.Helper()
		mps, err := mountsUnder(p)
		require.NoError(t, err)
		n := 0
		for _, mp := range mps {
			if mp.Path == p {
				n++
			}
		}
		return n
	}

	first, err := te.m.Mounts(pod, subPathContainer("app", "sub"), vols, nil)
	require.NoError(t, err)
	target := first[0].HostPath
	assert.Equal(t, filepath.Join(te.podsDir, "uid-1", "volume-subpaths", "scratch", "app", "0"), target, "the kubelet's layout")
	assert.Equal(t, 1, mountsAt(target))

	again, err := te.m.Mounts(pod, subPathContainer("app", "sub"), vols, nil)
	require.NoError(t, err)
	assert.Equal(t, first, again)
	assert.Equal(t, 1, mountsAt(target), "reused")

	// Another directory by that name now: mounted instead.
	require.NoError(t, os.Rename(name, name+".old"))
	require.NoError(t, os.Mkdir(name, 0o755))
	again, err = te.m.Mounts(pod, subPathContainer("app", "sub"), vols, nil)
	require.NoError(t, err)
	assert.Equal(t, target, again[0].HostPath)
	assert.True(t, os.SameFile(stat(t, name), stat(t, target)))
	assert.Equal(t, 1, mountsAt(target), "replaced")

	// A file by that name now.
	require.NoError(t, os.Remove(name))
	require.NoError(t, os.WriteFile(name, []byte("f"), 0o644))
	again, err = te.m.Mounts(pod, subPathContainer("app", "sub"), vols, nil)
	require.NoError(t, err)
	assert.True(t, stat(t, target).Mode().IsRegular())
	assert.Equal(t, "f", readFile(t, target))
	assert.Equal(t, 1, mountsAt(target))
}

// Teardown detaches every subPath mount before it removes their mount points, and removes
// nothing through a mount: the mount point of a file, of a directory, and a stale mount of a
// directory outside (a mount left at a mount point after a crash: the test's stand-in for one
// that could not be told apart) are detached, and what they showed is left alone.
func TestTeardownUnmountsSubPaths(t *testing.T) {
	te, pod, vols := subPathPod(t)
	c := &corev1.Container{Name: "app", VolumeMounts: []corev1.VolumeMount{
		{Name: "scratch", MountPath: "/dir", SubPath: "sub"},
		{Name: "scratch", MountPath: "/file", SubPath: "file"},
	}}
	_, err := te.m.Mounts(pod, c, vols, nil)
	require.NoError(t, err)
	outside := outsideDir(t)
	stale := filepath.Join(te.podsDir, "uid-1", "volume-subpaths", "scratch", "gone", "0")
	require.NoError(t, os.MkdirAll(stale, 0o750))
	require.NoError(t, unix.Mount(outside, stale, "", unix.MS_BIND, ""))
	t.Cleanup(func() { _ = unix.Unmount(stale, unix.MNT_DETACH) })

	require.NoError(t, te.m.Teardown(context.Background(), pod.UID))
	mps, err := mountsUnder(filepath.Join(te.podsDir, "uid-1"))
	require.NoError(t, err)
	assert.Empty(t, mps, "nothing left mounted below the pod's directory")
	assert.NoDirExists(t, filepath.Join(te.podsDir, "uid-1", "volume-subpaths"))
	assert.NoDirExists(t, te.m.volumesDir(pod.UID))
	assert.FileExists(t, filepath.Join(outside, "outside"), "nothing deleted through the stale mount")
}

// A mount below volume-subpaths that is not at a mount point of a subPath is not Teardown's:
// it stays, and so does everything it shows, with an error that names it, until it is gone.
func TestTeardownKeepsAForeignMountInSubPaths(t *testing.T) {
	te, pod, vols := subPathPod(t)
	_, err := te.m.Mounts(pod, subPathContainer("app", "sub"), vols, nil)
	require.NoError(t, err)
	outside := outsideDir(t)
	foreign := filepath.Join(te.podsDir, "uid-1", "volume-subpaths", "scratch", "elsewhere")
	require.NoError(t, os.Mkdir(foreign, 0o750))
	require.NoError(t, unix.Mount(outside, foreign, "", unix.MS_BIND, ""))
	t.Cleanup(func() { _ = unix.Unmount(foreign, unix.MNT_DETACH) })

	err = te.m.Teardown(context.Background(), pod.UID)
	require.Error(t, err)
	assert.ErrorContains(t, err, foreign)
	assert.FileExists(t, filepath.Join(outside, "outside"), "nothing deleted through the foreign mount")
	assert.DirExists(t, te.m.volumesDir(pod.UID), "the volumes wait")

	require.NoError(t, syscall.Unmount(foreign, 0))
	require.NoError(t, te.m.Teardown(context.Background(), pod.UID))
	assert.NoDirExists(t, filepath.Join(te.podsDir, "uid-1", "volume-subpaths"))
	assert.FileExists(t, filepath.Join(outside, "outside"))
}

// An agent restarted with subPath mounts in place (its containers kept running) tears them
// down with the pod: the mounts are found on disk and in the mount table, not in memory.
func TestTeardownSubPathsAfterAgentRestart(t *testing.T) {
	te, pod, vols := subPathPod(t)
	_, err := te.m.Mounts(pod, subPathContainer("app", "sub"), vols, nil)
	require.NoError(t, err)
	mps, err := mountsUnder(filepath.Join(te.podsDir, "uid-1", "volume-subpaths"))
	require.NoError(t, err)
	require.Len(t, mps, 1)

	restarted := newTestEnv(t, Config{PodsDir: te.podsDir, CanMount: true})
	require.NoError(t, restarted.m.Teardown(context.Background(), pod.UID))
	mps, err = mountsUnder(filepath.Join(te.podsDir, "uid-1"))
	require.NoError(t, err)
	assert.Empty(t, mps)
	assert.NoDirExists(t, filepath.Join(te.podsDir, "uid-1", "volume-subpaths"))
	assert.DirExists(t, filepath.Join(te.podsDir, "uid-1"), "the pod directory is not Teardown's")
}

// openBeneath opens what resolveSubPath resolved, and nothing through a symlink, even one that
// stays inside the volume: resolved paths have none left, so one is a swap.
func TestOpenBeneathRefusesSymlinks(t *testing.T) {
	for _, kernel := range []string{"openat2", "openat walk"} {
		t.Run(kernel, func(t *testing.T) {
			if kernel == "openat walk" {
				withoutOpenat2(t)
			}
			root := t.TempDir()
			require.NoError(t, os.MkdirAll(filepath.Join(root, "a/b"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(root, "a/b/f"), nil, 0o644))
			require.NoError(t, os.Symlink("b", filepath.Join(root, "a/in")))
			require.NoError(t, os.Symlink("/", filepath.Join(root, "a/root")))

			for _, rel := range []string{"", "a", "a/b", "a/b/f"} {
				fd, err := openBeneath(root, rel)
				if assert.NoError(t, err, rel) {
					var st, want unix.Stat_t
					require.NoError(t, unix.Fstat(fd, &st))
					require.NoError(t, unix.Stat(filepath.Join(root, rel), &want))
					assert.Equal(t, want.Ino, st.Ino, rel)
					unix.Close(fd)
				}
			}
			for _, rel := range []string{"a/in", "a/in/f", "a/root", "a/root/etc"} {
				_, err := openBeneath(root, rel)
				assert.ErrorIs(t, err, ErrOutsideVolume, rel)
			}
			_, err := openBeneath(root, "a/none")
			assert.ErrorIs(t, err, os.ErrNotExist)
			assert.NotErrorIs(t, err, ErrOutsideVolume)
		})
	}
}
