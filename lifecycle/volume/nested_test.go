package volume

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

func TestNestedMountpoints(t *testing.T) {
	pod := testPod()
	pod.Spec.InitContainers = []corev1.Container{{Name: "init", VolumeMounts: []corev1.VolumeMount{
		{Name: "conf", MountPath: "/etc/app"},
		{Name: "other", MountPath: "/etc/app/from-init"},
	}}}
	pod.Spec.Containers = []corev1.Container{{Name: "app", VolumeMounts: []corev1.VolumeMount{
		{Name: "conf", MountPath: "/etc/app/"},
		{Name: "certs", MountPath: "/etc/app/certs"},
		{Name: "deeper", MountPath: "/etc/app/certs/ca"}, // nested in certs, not in conf
		{Name: "sibling", MountPath: "/etc/app2"},        // a prefix by bytes, not by path
		{Name: "data", MountPath: "/etc/app/x/y"},
	}}}
	got := nestedMountpoints(pod, "conf")
	sort.Strings(got)
	assert.Equal(t, []string{"certs", "from-init", "x/y"}, got)
	assert.Empty(t, nestedMountpoints(pod, "certs")[1:], "certs has ca below it")
	assert.Equal(t, []string{"ca"}, nestedMountpoints(pod, "certs"))
}

func TestSetupMakesNestedMountpointsInReadOnlyVolumes(t *testing.T) {
	te := newTestEnv(t, Config{}, configMap("cfg", map[string]string{"app.yaml": "x", "certs": "a file"}))
	pod := testPod(
		vol("conf", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}),
		vol("data", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}),
	)
	pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{
		{Name: "conf", MountPath: "/etc/app"},
		{Name: "data", MountPath: "/etc/app/data/inner"},
		{Name: "data", MountPath: "/etc/app/certs"},    // a key of the configMap has that name too
		{Name: "data", MountPath: "/etc/app/..data/x"}, // reserved: never created
	}
	vols, _ := setup(t, te, pod)
	info, err := os.Lstat(filepath.Join(vols["conf"], "data/inner"))
	require.NoError(t, err)
	assert.True(t, info.IsDir())
	assert.Equal(t, "x", readFile(t, filepath.Join(vols["conf"], "app.yaml")))
	// The mount point is made first and the key's link is not put over it, as in the kubelet:
	// the container mounts something there, and sees that.
	info, err = os.Lstat(filepath.Join(vols["conf"], "certs"))
	require.NoError(t, err)
	assert.True(t, info.IsDir())
	assert.NoDirExists(t, filepath.Join(vols["conf"], "..data", "x"))
}
