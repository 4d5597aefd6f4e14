package volume

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

func TestMounts(t *testing.T) {
	hostDir := t.TempDir()
	outside := t.TempDir()
	// As root, subPaths are bound at mount points of the pod's own ([TestSubPathSurvivesASwap] and
	// the other subPath tests).
	te := newTestEnv(t, Config{AllowedHostPaths: []string{hostDir}, CanMount: os.Geteuid() == 0}, configMap("cfg", map[string]string{"app.yaml": "x"}))
	pod := testPod(
		vol("scratch", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}),
		vol("conf", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}),
		vol("host", corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: hostDir}}),
		vol("unset", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}),
	)
	vols, _ := setup(t, te, pod)
	delete(vols, "unset")
	scratch := vols["scratch"]
	require.NoError(t, os.MkdirAll(filepath.Join(scratch, "data/inner"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(scratch, "data/file"), []byte("f"), 0o644))
	// What a container could plant in a volume it writes to.
	require.NoError(t, os.Symlink("/", filepath.Join(scratch, "root")))
	require.NoError(t, os.Symlink("../../../../..", filepath.Join(scratch, "data/up")))
	require.NoError(t, os.Symlink(outside, filepath.Join(scratch, "out")))
	require.NoError(t, os.Symlink("inner", filepath.Join(scratch, "data/in")))
	require.NoError(t, os.Symlink(filepath.Join(outside, "none"), filepath.Join(scratch, "dangling")))
	confData, err := filepath.EvalSymlinks(filepath.Join(vols["conf"], dataDirName))
	require.NoError(t, err)
	scratchReal, err := filepath.EvalSymlinks(scratch)
	require.NoError(t, err)

	lookup := map[string]string{"POD_NAME": "web", "EMPTY": ""}
	expand := func(s string) string {
		for k, v := range lookup {
			s = strings.ReplaceAll(s, "$("+k+")", v)
		}
		return s
	}
	type kind int
	const (
		ok kind = iota
		refusal
		outsideVolume
		other
	)
	tests := []struct {
		name string
		init bool // an init container's mounts
		vm   corev1.VolumeMount
		dev  bool
		kind kind
		want Mount  // for ok
		msg  string // for errors: part of the message
	}{
		{name: "emptyDir", vm: corev1.VolumeMount{Name: "scratch", MountPath: "/scratch"},
			want: Mount{HostPath: scratch, ContainerPath: "/scratch"}},
		{name: "readOnly asked", vm: corev1.VolumeMount{Name: "scratch", MountPath: "/s/", ReadOnly: true},
			want: Mount{HostPath: scratch, ContainerPath: "/s", ReadOnly: true}},
		{name: "configMap is always read-only", vm: corev1.VolumeMount{Name: "conf", MountPath: "/etc/app"},
			want: Mount{HostPath: vols["conf"], ContainerPath: "/etc/app", ReadOnly: true}},
		{name: "hostPath", vm: corev1.VolumeMount{Name: "host", MountPath: "/host"},
			want: Mount{HostPath: hostDir, ContainerPath: "/host"}},
		{name: "relative mountPath made absolute", vm: corev1.VolumeMount{Name: "host", MountPath: "host"},
			want: Mount{HostPath: hostDir, ContainerPath: "/host"}},
		{name: "propagation None", vm: corev1.VolumeMount{Name: "host", MountPath: "/host", MountPropagation: ptr(corev1.MountPropagationNone)},
			want: Mount{HostPath: hostDir, ContainerPath: "/host"}},
		{name: "recursiveReadOnly IfPossible", vm: corev1.VolumeMount{Name: "host", MountPath: "/host", ReadOnly: true, RecursiveReadOnly: ptr(corev1.RecursiveReadOnlyIfPossible)},
			want: Mount{HostPath: hostDir, ContainerPath: "/host", ReadOnly: true}},
		{name: "subPath file", vm: corev1.VolumeMount{Name: "scratch", MountPath: "/f", SubPath: "data/file"},
			want: Mount{HostPath: filepath.Join(scratchReal, "data/file"), ContainerPath: "/f", SubPath: true}},
		{name: "subPath through a link inside", vm: corev1.VolumeMount{Name: "scratch", MountPath: "/d", SubPath: "data/in"},
			want: Mount{HostPath: filepath.Join(scratchReal, "data/inner"), ContainerPath: "/d", SubPath: true}},
		{name: "subPath of a configMap key resolves into its data", vm: corev1.VolumeMount{Name: "conf", MountPath: "/etc/app.yaml", SubPath: "app.yaml"},
			want: Mount{HostPath: filepath.Join(confData, "app.yaml"), ContainerPath: "/etc/app.yaml", ReadOnly: true, SubPath: true}},
		{name: "subPath created", vm: corev1.VolumeMount{Name: "scratch", MountPath: "/n", SubPath: "new/dir"},
			want: Mount{HostPath: filepath.Join(scratchReal, "new/dir"), ContainerPath: "/n", SubPath: true}},
		{name: "subPathExpr", vm: corev1.VolumeMount{Name: "scratch", MountPath: "/logs", SubPathExpr: "logs/$(POD_NAME)"},
			want: Mount{HostPath: filepath.Join(scratchReal, "logs/web"), ContainerPath: "/logs", SubPath: true}},
		{name: "init container", init: true, vm: corev1.VolumeMount{Name: "scratch", MountPath: "/scratch"},
			want: Mount{HostPath: scratch, ContainerPath: "/scratch"}},

		{name: "unknown volume", vm: corev1.VolumeMount{Name: "nope", MountPath: "/x"}, kind: refusal,
			msg: `spec.containers[0].volumeMounts[0].name "nope": no volume of that name in spec.volumes`},
		{name: "unknown volume in an init container", init: true, vm: corev1.VolumeMount{Name: "nope", MountPath: "/x"}, kind: refusal,
			msg: `spec.initContainers[0].volumeMounts[0].name "nope"`},
		{name: "volume not set up", vm: corev1.VolumeMount{Name: "unset", MountPath: "/x"}, kind: other,
			msg: `spec.containers[0].volumeMounts[0].name "unset": the volume is not set up`},
		{name: "volumeDevices", dev: true, vm: corev1.VolumeMount{Name: "scratch", MountPath: "/x"}, kind: refusal,
			msg: `spec.containers[0].volumeDevices[0] "blk": raw block volumes are not supported on this node`},
		{name: "propagation HostToContainer", vm: corev1.VolumeMount{Name: "host", MountPath: "/x", MountPropagation: ptr(corev1.MountPropagationHostToContainer)}, kind: refusal,
			msg: `spec.containers[0].volumeMounts[0].mountPropagation "HostToContainer": not supported on this node`},
		{name: "propagation Bidirectional", vm: corev1.VolumeMount{Name: "host", MountPath: "/x", MountPropagation: ptr(corev1.MountPropagationBidirectional)}, kind: refusal,
			msg: `spec.containers[0].volumeMounts[0].mountPropagation "Bidirectional"`},
		{name: "recursiveReadOnly Enabled", vm: corev1.VolumeMount{Name: "host", MountPath: "/x", ReadOnly: true, RecursiveReadOnly: ptr(corev1.RecursiveReadOnlyEnabled)}, kind: refusal,
			msg: `spec.containers[0].volumeMounts[0].recursiveReadOnly "Enabled"`},
		{name: "empty mountPath", vm: corev1.VolumeMount{Name: "host"}, kind: refusal,
			msg: `spec.containers[0].volumeMounts[0].mountPath: must not be empty`},
		{name: "subPath with ..", vm: corev1.VolumeMount{Name: "scratch", MountPath: "/x", SubPath: "data/../../x"}, kind: refusal,
			msg: `spec.containers[0].volumeMounts[0].subPath "data/../../x": must not contain '..'`},
		{name: "subPath absolute", vm: corev1.VolumeMount{Name: "scratch", MountPath: "/x", SubPath: "/etc"}, kind: refusal,
			msg: `spec.containers[0].volumeMounts[0].subPath "/etc": must be a relative path`},
		{name: "subPathExpr expanding to ..", vm: corev1.VolumeMount{Name: "scratch", MountPath: "/x", SubPathExpr: "..$(EMPTY)/x"}, kind: refusal,
			msg: `spec.containers[0].volumeMounts[0].subPathExpr "../x": must not contain '..'`},
		{name: "subPathExpr undefined variable", vm: corev1.VolumeMount{Name: "scratch", MountPath: "/x", SubPathExpr: "$(NOPE)"}, kind: other,
			msg: `spec.containers[0].volumeMounts[0].subPathExpr "$(NOPE)": expands to "$(NOPE)", which still references a variable`},
		{name: "subPath and subPathExpr", vm: corev1.VolumeMount{Name: "scratch", MountPath: "/x", SubPath: "a", SubPathExpr: "b"}, kind: refusal,
			msg: `spec.containers[0].volumeMounts[0]: subPath and subPathExpr are mutually exclusive`},
		{name: "subPath symlink to /", vm: corev1.VolumeMount{Name: "scratch", MountPath: "/x", SubPath: "root"}, kind: outsideVolume,
			msg: `spec.containers[0].volumeMounts[0].subPath "root": subPath leads outside the volume`},
		{name: "subPath through a symlink to /", vm: corev1.VolumeMount{Name: "scratch", MountPath: "/x", SubPath: "root/etc"}, kind: outsideVolume,
			msg: `spec.containers[0].volumeMounts[0].subPath "root/etc"`},
		{name: "subPath relative symlink up", vm: corev1.VolumeMount{Name: "scratch", MountPath: "/x", SubPath: "data/up/etc"}, kind: outsideVolume,
			msg: `spec.containers[0].volumeMounts[0].subPath "data/up/etc"`},
		{name: "subPath symlink to another directory", vm: corev1.VolumeMount{Name: "scratch", MountPath: "/x", SubPath: "out"}, kind: outsideVolume},
		{name: "subPathExpr symlink escape", vm: corev1.VolumeMount{Name: "scratch", MountPath: "/x", SubPathExpr: "$(EMPTY)root"}, kind: outsideVolume,
			msg: `spec.containers[0].volumeMounts[0].subPathExpr "root"`},
		{name: "subPath dangling symlink", vm: corev1.VolumeMount{Name: "scratch", MountPath: "/x", SubPath: "dangling/sub"}, kind: other,
			msg: `is a symlink to "` + filepath.Join(outside, "none") + `", which does not exist`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &corev1.Container{Name: "app", VolumeMounts: []corev1.VolumeMount{tt.vm}}
			if tt.dev {
				c.VolumeDevices = []corev1.VolumeDevice{{Name: "blk", DevicePath: "/dev/xvda"}}
			}
			p := pod.DeepCopy()
			if tt.init {
				c.Name = "init"
				p.Spec.InitContainers = []corev1.Container{*c}
			} else {
				p.Spec.Containers = []corev1.Container{*c}
			}
			mounts, err := te.m.Mounts(p, c, vols, expand)
			var fe *FieldError
			switch tt.kind {
			case ok:
				require.NoError(t, err)
				require.Len(t, mounts, 1)
				if tt.want.SubPath {
					_, err := os.Stat(tt.want.HostPath)
					assert.NoError(t, err, "the subPath exists")
				}
				if tt.want.SubPath && te.m.canMount {
					assert.Equal(t, te.m.subPathTarget(p.UID, tt.vm.Name, c.Name, 0), mounts[0].HostPath)
					assert.True(t, os.SameFile(stat(t, tt.want.HostPath), stat(t, mounts[0].HostPath)), "the subPath is mounted there")
					mounts[0].HostPath = tt.want.HostPath
				}
				assert.Equal(t, []Mount{tt.want}, mounts)
				return
			case refusal:
				assert.ErrorAs(t, err, &fe)
			case outsideVolume:
				assert.ErrorIs(t, err, ErrOutsideVolume)
				assert.False(t, errors.As(err, &fe))
			case other:
				require.Error(t, err)
				assert.False(t, errors.As(err, &fe))
				assert.NotErrorIs(t, err, ErrOutsideVolume)
			}
			assert.Nil(t, mounts)
			assert.Contains(t, err.Error(), tt.msg)
		})
	}
	// Nothing was created outside the volume.
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	assert.Empty(t, entries)
}

func TestMountsNamesTheContainersField(t *testing.T) {
	te := newTestEnv(t, Config{})
	pod := testPod()
	pod.Spec.InitContainers = []corev1.Container{{Name: "init"}}
	pod.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug"}}}
	for name, want := range map[string]string{
		"app": "spec.containers[0]", "init": "spec.initContainers[0]", "debug": "spec.ephemeralContainers[0]", "gone": `container "gone"`,
	} {
		c := &corev1.Container{Name: name, VolumeMounts: []corev1.VolumeMount{{Name: "x", MountPath: "/x"}}}
		_, err := te.m.Mounts(pod, c, Volumes{}, nil)
		assert.ErrorContains(t, err, want+`.volumeMounts[0].name "x": no volume of that name`)
	}
}

func TestMountsSubPathDirectoryTakesTheVolumeMode(t *testing.T) {
	te := newTestEnv(t, Config{})
	pod := testPod(vol("scratch", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}))
	vols, _ := setup(t, te, pod)
	c := &corev1.Container{Name: "app", VolumeMounts: []corev1.VolumeMount{{Name: "scratch", MountPath: "/x", SubPath: "a/b"}}}
	mounts, err := te.m.Mounts(pod, c, vols, nil)
	require.NoError(t, err)
	require.Len(t, mounts, 1)
	assert.Equal(t, os.FileMode(0o777), mode(t, mounts[0].HostPath))
	assert.Equal(t, os.FileMode(0o777), mode(t, filepath.Dir(mounts[0].HostPath)))
}
