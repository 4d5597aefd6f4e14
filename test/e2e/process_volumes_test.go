package e2e

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
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/internal/mounts"
	"github.com/vk-static/vk-static/test/support/podwait"
)

// An API pod with an fsGroup, as the upstream [NodeConformance] specs check it: its
// downwardAPI files are the group's and group-readable (defaultMode 0400 gives 0440), which
// its container, of another user with the fsGroup among its groups, reads; its emptyDir is the
// group's with the setgid bit, so a file the container creates there is the group's too. And its new labels and annotations reach the downwardAPI files in the container
// well within --sync-frequency (a minute here), as a pod update does on the kubelet ("Downward
// API volume should update labels/annotations on modification").
func TestProcessFSGroupAndDownwardAPIUpdates(t *testing.T) {
	t.Parallel()
	const fsGroup = 4321
	a := startProcessAgent(t, "--sync-frequency", "1m")
	t.Cleanup(func() {
		// A test that failed before the pod was deleted leaves its downwardAPI tmpfs, which
		// would keep the test's directory from being removed (detached lazily: the agent
		// still runs until its own clean-up).
		if t.Failed() {
			assert.NoError(t, mounts.UnmountUnder(filepath.Join(a.Dir, "root", "pods")))
		}
	})
	ctx := context.Background()
	ns := env.Namespace(t)
	pods := env.Admin.CoreV1().Pods(ns)
	fieldRef := func(p string) *corev1.ObjectFieldSelector { return &corev1.ObjectFieldSelector{FieldPath: p} }
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "fsgroup", Labels: map[string]string{"key1": "value1"}, Annotations: map[string]string{"builder": "bar"}},
		Spec: corev1.PodSpec{
			NodeName:                      a.Node,
			AutomountServiceAccountToken:  ptr.To(false),
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			SecurityContext: &corev1.PodSecurityContext{
				// Not 1000, often the host's first user's: an API pod may not run as it.
				FSGroup: ptr.To[int64](fsGroup), RunAsUser: ptr.To[int64](54321), RunAsGroup: ptr.To[int64](54321)},
			Containers: []corev1.Container{{
				Name: "main", Image: "busybox",
				Command: shell(`echo made > /mnt/new; while true; do cat /srv/labels /srv/annotations; echo; sleep 0.5; done`),
				VolumeMounts: []corev1.VolumeMount{
					// Host paths that exist: the process provider mounts over them, in the
					// container's own mount namespace.
					{Name: "info", MountPath: "/srv"},
					{Name: "scratch", MountPath: "/mnt"},
				},
			}},
			Volumes: []corev1.Volume{
				{Name: "info", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{
					DefaultMode: ptr.To[int32](0o400),
					Items: []corev1.DownwardAPIVolumeFile{
						{Path: "labels", FieldRef: fieldRef("metadata.labels")},
						{Path: "annotations", FieldRef: fieldRef("metadata.annotations")},
					}}}},
				{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			},
		},
	}
	created, err := pods.Create(ctx, pod, metav1.CreateOptions{})
	require.NoError(t, err)
	podwait.Until(t, env.Admin, ns, "fsgroup", 30*time.Second, "Running", podwait.MainRunning)

	logs := func(c *assert.CollectT) string {
		out, err := podLogs(ctx, ns, "fsgroup", &corev1.PodLogOptions{Container: "main", TailLines: ptr.To[int64](4)})
		require.NoError(c, err)
		return out
	}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		out := logs(c)
		assert.Contains(c, out, `key1="value1"`)
		assert.Contains(c, out, `builder="bar"`)
	}, 20*time.Second, 200*time.Millisecond, "the container reads its downwardAPI files")

	// On the host, as root: who owns what the pod sees.
	volumes := filepath.Join(a.Dir, "root", "pods", string(created.UID), "volumes")
	owned := func(p string) (gid uint32, mode fs.FileMode) {
		t.Helper()
		info, err := os.Lstat(p)
		require.NoError(t, err)
		return info.Sys().(*syscall.Stat_t).Gid, info.Mode()
	}
	gid, mode := owned(filepath.Join(volumes, "kubernetes.io~downward-api/info/..data/labels"))
	assert.EqualValues(t, fsGroup, gid, "downwardAPI file's group")
	assert.Equal(t, fs.FileMode(0o440), mode, "defaultMode 0400 plus the fsGroup's read")
	scratch := filepath.Join(volumes, "kubernetes.io~empty-dir/scratch")
	gid, mode = owned(scratch)
	assert.EqualValues(t, fsGroup, gid, "emptyDir's group")
	assert.Equal(t, fs.ModeDir|fs.ModeSetgid|0o777, mode, "emptyDir's mode")
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		info, err := os.Lstat(filepath.Join(scratch, "new"))
		require.NoError(c, err)
		assert.EqualValues(c, fsGroup, info.Sys().(*syscall.Stat_t).Gid, "the group of a file the container made")
	}, 10*time.Second, 100*time.Millisecond)

	current, err := pods.Get(ctx, "fsgroup", metav1.GetOptions{})
	require.NoError(t, err)
	current.Labels["key3"] = "value3"
	current.Annotations["builder"] = "foo"
	_, err = pods.Update(ctx, current, metav1.UpdateOptions{})
	require.NoError(t, err)
	updated := time.Now()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		out := logs(c)
		assert.Contains(c, out, `key3="value3"`)
		assert.Contains(c, out, `builder="foo"`)
	}, 20*time.Second, 200*time.Millisecond, "new labels and annotations in the files within a sync, not --sync-frequency (1m)")
	t.Logf("labels and annotations updated in the container after %s", time.Since(updated))

	require.NoError(t, pods.Delete(ctx, "fsgroup", metav1.DeleteOptions{}))
	podwait.Gone(t, env.Admin, ns, "fsgroup", 30*time.Second)
	a.noContainerProcesses(10 * time.Second)
}
