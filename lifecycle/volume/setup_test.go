package volume

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/vk-static/vk-static/kubeclient/kubeclienttest"
	"github.com/vk-static/vk-static/lifecycle/env"
	"github.com/vk-static/vk-static/nodeobjects"
	"github.com/vk-static/vk-static/podutil"
)

func vol(name string, src corev1.VolumeSource) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: src}
}

// visible reads a user-visible file of a written volume and checks it is a symlink through
// ..data, as the kubelet lays them out.
func visible(t *testing.T, dir, rel string) string {
	t.Helper()
	top := strings.SplitN(rel, "/", 2)[0]
	target, err := os.Readlink(filepath.Join(dir, top))
	require.NoError(t, err, "%s is a symlink", top)
	assert.Equal(t, filepath.Join(dataDirName, top), target)
	return readFile(t, filepath.Join(dir, rel))
}

func mode(t *testing.T, p string) os.FileMode {
	t.Helper()
	info, err := os.Stat(p)
	require.NoError(t, err)
	return info.Mode().Perm()
}

// noTmpfs is the warning for a memory-backed volume on a node where the agent cannot mount.
const noTmpfs = "the volume is a plain directory on the node's disk, not tmpfs"

func TestSetupKinds(t *testing.T) {
	objs := []runtime.Object{
		configMap("cfg", map[string]string{"a.conf": "A", "b.conf": "B"}),
		&corev1.ConfigMap{ObjectMeta: configMap("bin", nil).ObjectMeta, BinaryData: map[string][]byte{"blob": {0, 1, 2}}},
		secret("creds", map[string]string{"user": "u", "pass": "p"}),
	}
	tests := []struct {
		name      string
		volume    corev1.Volume
		cfg       Config
		wantDir   string // relative to the pod's volumes directory; "" for hostPath
		check     func(t *testing.T, dir string)
		wantWarns []string
	}{{
		name:    "emptyDir",
		volume:  vol("scratch", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}),
		wantDir: "kubernetes.io~empty-dir/scratch",
		check: func(t *testing.T, dir string) {
			assert.Equal(t, os.FileMode(0o777), mode(t, dir))
		},
	}, {
		name: "emptyDir sizeLimit is not enforced",
		volume: vol("scratch", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{
			SizeLimit: ptr(resource.MustParse("1Gi"))}}),
		wantDir:   "kubernetes.io~empty-dir/scratch",
		wantWarns: []string{"spec.volumes[0].emptyDir.sizeLimit 1Gi is not enforced"},
	}, {
		name:      "emptyDir Memory without the right to mount",
		volume:    vol("fast", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}),
		cfg:       Config{CanMount: false},
		wantDir:   "kubernetes.io~empty-dir/fast",
		wantWarns: []string{"spec.volumes[0].emptyDir.medium: " + noTmpfs},
		check: func(t *testing.T, dir string) {
			assert.DirExists(t, dir)
		},
	}, {
		name:    "configMap, every key",
		volume:  vol("conf", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}),
		wantDir: "kubernetes.io~configmap/conf",
		check: func(t *testing.T, dir string) {
			assert.Equal(t, "A", visible(t, dir, "a.conf"))
			assert.Equal(t, "B", visible(t, dir, "b.conf"))
			assert.Equal(t, os.FileMode(0o644), mode(t, filepath.Join(dir, "a.conf")))
			ts, err := os.Readlink(filepath.Join(dir, dataDirName))
			require.NoError(t, err)
			assert.True(t, strings.HasPrefix(ts, "..2026_11_23_07_00_00."), "timestamped from the clock: %s", ts)
		},
	}, {
		name: "configMap items with modes and nested paths",
		volume: vol("conf", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"},
			DefaultMode:          ptr(int32(0o640)),
			Items: []corev1.KeyToPath{
				{Key: "a.conf", Path: "etc/app/a.conf"},
				{Key: "b.conf", Path: "b", Mode: ptr(int32(0o600))},
			}}}),
		wantDir: "kubernetes.io~configmap/conf",
		check: func(t *testing.T, dir string) {
			assert.Equal(t, "A", visible(t, dir, "etc/app/a.conf"))
			assert.Equal(t, "B", visible(t, dir, "b"))
			assert.Equal(t, os.FileMode(0o640), mode(t, filepath.Join(dir, "etc/app/a.conf")))
			assert.Equal(t, os.FileMode(0o600), mode(t, filepath.Join(dir, "b")))
			assert.NoFileExists(t, filepath.Join(dir, "a.conf"))
		},
	}, {
		name:    "configMap binaryData",
		volume:  vol("bin", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "bin"}}}),
		wantDir: "kubernetes.io~configmap/bin",
		check: func(t *testing.T, dir string) {
			assert.Equal(t, "\x00\x01\x02", visible(t, dir, "blob"))
		},
	}, {
		name:    "configMap optional and missing: empty",
		volume:  vol("conf", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "absent"}, Optional: ptr(true)}}),
		wantDir: "kubernetes.io~configmap/conf",
		check:   onlyReserved,
	}, {
		name: "configMap optional, missing key skipped",
		volume: vol("conf", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}, Optional: ptr(true),
			Items: []corev1.KeyToPath{{Key: "nope", Path: "nope"}, {Key: "a.conf", Path: "a"}}}}),
		wantDir: "kubernetes.io~configmap/conf",
		check: func(t *testing.T, dir string) {
			assert.Equal(t, "A", visible(t, dir, "a"))
			assert.NoFileExists(t, filepath.Join(dir, "nope"))
		},
	}, {
		name:      "secret, default mode 0644",
		volume:    vol("creds", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds"}}),
		wantDir:   "kubernetes.io~secret/creds",
		wantWarns: []string{"spec.volumes[0] (creds): " + noTmpfs},
		check: func(t *testing.T, dir string) {
			assert.Equal(t, "u", visible(t, dir, "user"))
			assert.Equal(t, "p", visible(t, dir, "pass"))
			assert.Equal(t, os.FileMode(0o644), mode(t, filepath.Join(dir, "pass")))
		},
	}, {
		name:      "secret defaultMode",
		volume:    vol("creds", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds", DefaultMode: ptr(int32(0o400))}}),
		wantDir:   "kubernetes.io~secret/creds",
		wantWarns: []string{"spec.volumes[0] (creds): " + noTmpfs},
		check: func(t *testing.T, dir string) {
			assert.Equal(t, os.FileMode(0o400), mode(t, filepath.Join(dir, "user")))
		},
	}, {
		name:      "secret optional and missing: empty",
		volume:    vol("creds", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "absent", Optional: ptr(true)}}),
		wantDir:   "kubernetes.io~secret/creds",
		wantWarns: []string{"spec.volumes[0] (creds): " + noTmpfs},
		check:     onlyReserved,
	}, {
		name: "downwardAPI",
		volume: vol("info", corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
			{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}},
			{Path: "annotations", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations"}},
			{Path: "meta/name", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}},
			{Path: "app", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels['app']"}},
			{Path: "mem", Mode: ptr(int32(0o600)), ResourceFieldRef: &corev1.ResourceFieldSelector{
				ContainerName: "app", Resource: "limits.memory", Divisor: resource.MustParse("1Mi")}},
		}}}),
		wantDir: "kubernetes.io~downward-api/info",
		check: func(t *testing.T, dir string) {
			assert.Equal(t, "app=\"web\"\ntier=\"front\"", visible(t, dir, "labels"))
			assert.Equal(t, `note="a \"quoted\" value"`, visible(t, dir, "annotations"))
			assert.Equal(t, "web", visible(t, dir, "meta/name"))
			assert.Equal(t, "web", visible(t, dir, "app"))
			assert.Equal(t, "64", visible(t, dir, "mem"))
			assert.Equal(t, os.FileMode(0o600), mode(t, filepath.Join(dir, "mem")))
		},
	}, {
		name: "projected configMap, secret and downwardAPI",
		volume: vol("all", corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			DefaultMode: ptr(int32(0o440)),
			Sources: []corev1.VolumeProjection{
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"},
					Items: []corev1.KeyToPath{{Key: "a.conf", Path: "conf/a"}}}},
				{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "creds"},
					Items: []corev1.KeyToPath{{Key: "user", Path: "conf/user", Mode: ptr(int32(0o400))}}}},
				{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "absent"}, Optional: ptr(true)}},
				{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{
					{Path: "ns", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}}}},
			}}}),
		wantDir:   "kubernetes.io~projected/all",
		wantWarns: []string{"spec.volumes[0] (all): " + noTmpfs},
		check: func(t *testing.T, dir string) {
			assert.Equal(t, "A", visible(t, dir, "conf/a"))
			assert.Equal(t, "u", visible(t, dir, "conf/user"))
			assert.Equal(t, "ns", visible(t, dir, "ns"))
			assert.Equal(t, os.FileMode(0o440), mode(t, filepath.Join(dir, "conf/a")))
			assert.Equal(t, os.FileMode(0o400), mode(t, filepath.Join(dir, "conf/user")))
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			te := newTestEnv(t, tt.cfg, objs...)
			pod := testPod(tt.volume)
			pod.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}
			vols, warnings := setup(t, te, pod)
			want := filepath.Join(te.podsDir, "uid-1", "volumes", tt.wantDir)
			assert.Equal(t, Volumes{tt.volume.Name: want}, vols)
			assert.Len(t, warnings, len(tt.wantWarns), "warnings: %q", warnings)
			for i := range min(len(warnings), len(tt.wantWarns)) {
				assert.Contains(t, warnings[i], tt.wantWarns[i])
			}
			if tt.check != nil {
				tt.check(t, want)
			}
		})
	}
}

// onlyReserved checks a written volume holds no user-visible entry.
func onlyReserved(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		assert.True(t, strings.HasPrefix(e.Name(), ".."), "unexpected entry %s", e.Name())
	}
	assert.FileExists(t, filepath.Join(dir, dataDirName))
}

func TestSetupHostPath(t *testing.T) {
	allowed := t.TempDir()
	outside := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(allowed, "dir"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(allowed, "file"), nil, 0o600))
	require.NoError(t, os.Symlink(filepath.Join(allowed, "dir"), filepath.Join(allowed, "link-inside")))

	tests := []struct {
		name     string
		path     string
		typ      *corev1.HostPathType
		want     string
		wantMode os.FileMode
		wantFile bool
	}{
		{name: "unset type, not there", path: filepath.Join(allowed, "nothing"), want: filepath.Join(allowed, "nothing")},
		{name: "the allowed prefix itself", path: allowed, typ: ptr(corev1.HostPathDirectory), want: allowed},
		{name: "Directory", path: filepath.Join(allowed, "dir"), typ: ptr(corev1.HostPathDirectory), want: filepath.Join(allowed, "dir")},
		{name: "File", path: filepath.Join(allowed, "file"), typ: ptr(corev1.HostPathFile), want: filepath.Join(allowed, "file")},
		{name: "unclean path", path: allowed + "//dir/./", typ: ptr(corev1.HostPathDirectory), want: filepath.Join(allowed, "dir")},
		{name: "symlink inside resolved", path: filepath.Join(allowed, "link-inside"), typ: ptr(corev1.HostPathDirectory), want: filepath.Join(allowed, "dir")},
		{name: "DirectoryOrCreate creates 0755 with parents", path: filepath.Join(allowed, "new/deep"), typ: ptr(corev1.HostPathDirectoryOrCreate),
			want: filepath.Join(allowed, "new/deep"), wantMode: 0o755},
		{name: "DirectoryOrCreate keeps an existing one", path: filepath.Join(allowed, "dir"), typ: ptr(corev1.HostPathDirectoryOrCreate), want: filepath.Join(allowed, "dir")},
		{name: "FileOrCreate creates an empty 0644 file", path: filepath.Join(allowed, "dir/new.txt"), typ: ptr(corev1.HostPathFileOrCreate),
			want: filepath.Join(allowed, "dir/new.txt"), wantMode: 0o644, wantFile: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			te := newTestEnv(t, Config{AllowedHostPaths: []string{allowed, outside + "/unused"}})
			vols, _ := setup(t, te, testPod(vol("h", corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: tt.path, Type: tt.typ}})))
			assert.Equal(t, tt.want, vols["h"])
			if tt.wantMode != 0 {
				info, err := os.Stat(tt.want)
				require.NoError(t, err)
				assert.Equal(t, tt.wantMode, info.Mode().Perm())
				assert.Equal(t, tt.wantFile, info.Mode().IsRegular())
				if tt.wantFile {
					assert.Zero(t, info.Size())
				}
			}
		})
	}
}

func TestSetupRefusals(t *testing.T) {
	allowed := t.TempDir()
	outside := t.TempDir()
	require.NoError(t, os.Symlink(outside, filepath.Join(allowed, "escape")))
	require.NoError(t, os.WriteFile(filepath.Join(allowed, "file"), nil, 0o644))
	require.NoError(t, os.Symlink(filepath.Join(outside, "later"), filepath.Join(allowed, "dangling")))
	objs := []runtime.Object{
		configMap("cfg", map[string]string{"a": "A"}), secret("creds", map[string]string{"u": "U"}),
		configMap("odd", map[string]string{"..hidden": "x"}), // the API server would refuse this key
	}

	type kind int
	const (
		refusal kind = iota // *FieldError
		missing             // *MissingObjectError
		retry               // anything else
	)
	cmRef := corev1.LocalObjectReference{Name: "cfg"}
	tests := []struct {
		name    string
		volumes []corev1.Volume
		cfg     *Config
		kind    kind
		want    string // the error message, or a part of it
	}{
		{name: "persistentVolumeClaim", kind: refusal,
			volumes: []corev1.Volume{vol("data", corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}})},
			want:    "spec.volumes[0].persistentVolumeClaim: persistentVolumeClaim volumes are not supported on this node (supported: emptyDir, hostPath, configMap, secret, downwardAPI, projected)"},
		{name: "csi", kind: refusal,
			volumes: []corev1.Volume{vol("a", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}), vol("d", corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "x"}})},
			want:    "spec.volumes[1].csi: csi volumes are not supported"},
		{name: "nfs", kind: refusal, volumes: []corev1.Volume{vol("d", corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{Server: "s", Path: "/"}})},
			want: "spec.volumes[0].nfs: nfs volumes are not supported"},
		{name: "iscsi", kind: refusal, volumes: []corev1.Volume{vol("d", corev1.VolumeSource{ISCSI: &corev1.ISCSIVolumeSource{}})},
			want: "spec.volumes[0].iscsi: iscsi volumes are not supported"},
		{name: "ephemeral", kind: refusal, volumes: []corev1.Volume{vol("d", corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}})},
			want: "spec.volumes[0].ephemeral: ephemeral volumes are not supported"},
		{name: "image", kind: refusal, volumes: []corev1.Volume{vol("d", corev1.VolumeSource{Image: &corev1.ImageVolumeSource{Reference: "busybox"}})},
			want: "spec.volumes[0].image: image volumes are not supported"},
		{name: "no source", kind: refusal, volumes: []corev1.Volume{vol("d", corev1.VolumeSource{})},
			want: `spec.volumes[0] "d": no volume source set`},
		{name: "bad volume name", kind: refusal, volumes: []corev1.Volume{vol("../x", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}})},
			want: `spec.volumes[0].name "../x": must be a DNS label`},
		{name: "duplicate volume name", kind: refusal,
			volumes: []corev1.Volume{vol("x", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}), vol("x", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}})},
			want:    `spec.volumes[1].name "x": duplicate volume name`},
		{name: "emptyDir hugepages", kind: refusal,
			volumes: []corev1.Volume{vol("h", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumHugePages}})},
			want:    `spec.volumes[0].emptyDir.medium "HugePages": not supported on this node`},
		{name: "hostPath outside the allowed prefixes", kind: refusal,
			cfg:     &Config{AllowedHostPaths: []string{"/srv", "/data"}},
			volumes: []corev1.Volume{vol("h", corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/etc"}})},
			want:    `spec.volumes[0].hostPath.path "/etc": an API pod's hostPath is not under --process-allowed-host-paths (allowed: /srv, /data)`},
		{name: "hostPath prefix is a whole path element", kind: refusal,
			cfg:     &Config{AllowedHostPaths: []string{"/srv"}},
			volumes: []corev1.Volume{vol("h", corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/srv2/x"}})},
			want:    `spec.volumes[0].hostPath.path "/srv2/x": an API pod's hostPath is not under --process-allowed-host-paths (allowed: /srv)`},
		{name: "hostPath .. out of the prefix", kind: refusal,
			cfg:     &Config{AllowedHostPaths: []string{"/srv"}},
			volumes: []corev1.Volume{vol("h", corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/srv/../etc"}})},
			want:    `spec.volumes[0].hostPath.path "/srv/../etc": an API pod's hostPath is not under --process-allowed-host-paths (resolves to "/etc") (allowed: /srv)`},
		{name: "hostPath symlink out of the prefix", kind: refusal,
			volumes: []corev1.Volume{vol("h", corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: filepath.Join(allowed, "escape/sub")}})},
			want:    `an API pod's hostPath is not under --process-allowed-host-paths (resolves to "` + filepath.Join(outside, "sub") + `")`},
		{name: "hostPath none allowed", kind: refusal, cfg: &Config{},
			volumes: []corev1.Volume{vol("h", corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/srv"}})},
			want:    `spec.volumes[0].hostPath.path "/srv": an API pod's hostPath volumes are not allowed on this node: --process-allowed-host-paths names no allowed prefix`},
		{name: "hostPath relative", kind: refusal,
			volumes: []corev1.Volume{vol("h", corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "srv/x"}})},
			want:    `spec.volumes[0].hostPath.path "srv/x": must be an absolute path`},
		{name: "hostPath unknown type", kind: refusal,
			volumes: []corev1.Volume{vol("h", corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: allowed, Type: ptr(corev1.HostPathType("Fifo"))}})},
			want:    `spec.volumes[0].hostPath.type "Fifo": unknown hostPath type`},
		{name: "hostPath through a dangling symlink", kind: retry,
			volumes: []corev1.Volume{vol("h", corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: filepath.Join(allowed, "dangling/x"), Type: ptr(corev1.HostPathDirectoryOrCreate)}})},
			want:    `spec.volumes[0].hostPath.path "` + filepath.Join(allowed, "dangling/x") + `": resolving symlinks: ` + filepath.Join(allowed, "dangling") + ` is a symlink to "` + filepath.Join(outside, "later") + `", which does not exist`},
		{name: "hostPath Directory missing", kind: retry,
			volumes: []corev1.Volume{vol("h", corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: filepath.Join(allowed, "none"), Type: ptr(corev1.HostPathDirectory)}})},
			want:    "spec.volumes[0].hostPath.type Directory: hostPath type check failed: " + filepath.Join(allowed, "none") + " is not a directory"},
		{name: "hostPath Directory is a file", kind: retry,
			volumes: []corev1.Volume{vol("h", corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: filepath.Join(allowed, "file"), Type: ptr(corev1.HostPathDirectory)}})},
			want:    "is not a directory"},
		{name: "hostPath File is a directory", kind: retry,
			volumes: []corev1.Volume{vol("h", corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: allowed, Type: ptr(corev1.HostPathFile)}})},
			want:    "is not a file"},
		{name: "hostPath DirectoryOrCreate on a file", kind: retry,
			volumes: []corev1.Volume{vol("h", corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: filepath.Join(allowed, "file"), Type: ptr(corev1.HostPathDirectoryOrCreate)}})},
			want:    "is not a directory"},
		{name: "hostPath FileOrCreate on a directory", kind: retry,
			volumes: []corev1.Volume{vol("h", corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: allowed, Type: ptr(corev1.HostPathFileOrCreate)}})},
			want:    "is not a file"},
		{name: "hostPath Socket", kind: retry,
			volumes: []corev1.Volume{vol("h", corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: filepath.Join(allowed, "file"), Type: ptr(corev1.HostPathSocket)}})},
			want:    "is not a socket file"},
		{name: "hostPath CharDevice", kind: retry,
			volumes: []corev1.Volume{vol("h", corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: filepath.Join(allowed, "file"), Type: ptr(corev1.HostPathCharDev)}})},
			want:    "is not a character device"},
		{name: "hostPath BlockDevice", kind: retry,
			volumes: []corev1.Volume{vol("h", corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: filepath.Join(allowed, "file"), Type: ptr(corev1.HostPathBlockDev)}})},
			want:    "is not a block device"},
		{name: "configMap required and missing", kind: missing,
			volumes: []corev1.Volume{vol("c", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "absent"}}})},
			want:    "spec.volumes[0].configMap: ConfigMap ns/absent not found (create it, or mark the source optional)"},
		{name: "configMap required key missing", kind: missing,
			volumes: []corev1.Volume{vol("c", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: cmRef,
				Items: []corev1.KeyToPath{{Key: "a", Path: "a"}, {Key: "zz", Path: "zz"}}}})},
			want: `spec.volumes[0].configMap.items[1].key: ConfigMap ns/cfg has no key "zz"`},
		{name: "secret required and missing", kind: missing,
			volumes: []corev1.Volume{vol("s", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "absent"}})},
			want:    "spec.volumes[0].secret: Secret ns/absent not found"},
		{name: "projected secret required and missing", kind: missing,
			volumes: []corev1.Volume{vol("p", corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "absent"}}}}}})},
			want: "spec.volumes[0].projected.sources[0].secret: Secret ns/absent not found"},
		{name: "a key that cannot be a file name", kind: retry,
			volumes: []corev1.Volume{vol("c", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "odd"}}})},
			want:    `spec.volumes[0].configMap: ConfigMap ns/odd key "..hidden" cannot be a file name: must not start with '..'`},
		{name: "item path with ..", kind: refusal,
			volumes: []corev1.Volume{vol("c", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: cmRef,
				Items: []corev1.KeyToPath{{Key: "a", Path: "x/../../etc/passwd"}}}})},
			want: `spec.volumes[0].configMap.items[0].path "x/../../etc/passwd": must not contain '..'`},
		{name: "item path absolute", kind: refusal,
			volumes: []corev1.Volume{vol("s", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds",
				Items: []corev1.KeyToPath{{Key: "u", Path: "/etc/passwd"}}}})},
			want: `spec.volumes[0].secret.items[0].path "/etc/passwd": must be a relative path`},
		{name: "item path reserved ..data", kind: refusal,
			volumes: []corev1.Volume{vol("c", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: cmRef,
				Items: []corev1.KeyToPath{{Key: "a", Path: "..data/x"}}}})},
			want: `spec.volumes[0].configMap.items[0].path "..data/x": must not start with '..'`},
		{name: "downwardAPI path with ..", kind: refusal,
			volumes: []corev1.Volume{vol("d", corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
				{Path: "../name", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}})},
			want: `spec.volumes[0].downwardAPI.items[0].path "../name": must not contain '..'`},
		{name: "item mode too large", kind: refusal,
			volumes: []corev1.Volume{vol("c", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: cmRef,
				Items: []corev1.KeyToPath{{Key: "a", Path: "a", Mode: ptr(int32(0o4755))}}}})},
			want: `spec.volumes[0].configMap.items[0].mode "04755": must be between 0 and 0777 (octal)`},
		{name: "defaultMode negative", kind: refusal,
			volumes: []corev1.Volume{vol("s", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds", DefaultMode: ptr(int32(-1))}})},
			want:    `spec.volumes[0].secret.defaultMode`},
		{name: "downwardAPI unsupported fieldPath", kind: refusal,
			volumes: []corev1.Volume{vol("d", corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
				{Path: "phase", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.phase"}}}}})},
			want: `spec.volumes[0].downwardAPI.items[0].fieldRef.fieldPath "status.phase": `},
		{name: "downwardAPI unknown container", kind: refusal,
			volumes: []corev1.Volume{vol("d", corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
				{Path: "cpu", ResourceFieldRef: &corev1.ResourceFieldSelector{ContainerName: "nope", Resource: "limits.cpu"}}}}})},
			want: `spec.volumes[0].downwardAPI.items[0].resourceFieldRef "limits.cpu": `},
		{name: "downwardAPI item with no reference", kind: refusal,
			volumes: []corev1.Volume{vol("d", corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{{Path: "x"}}}})},
			want:    `spec.volumes[0].downwardAPI.items[0]: must set fieldRef or resourceFieldRef`},
		{name: "projected serviceAccountToken without a token requester", kind: refusal,
			volumes: []corev1.Volume{vol("kube-api-access", corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: cmRef}},
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}}}}})},
			want: "spec.volumes[0].projected.sources[1].serviceAccountToken: service account tokens are requested from the API server with the node's identity, and this agent runs without one; set automountServiceAccountToken: false"},
		{name: "projected clusterTrustBundle", kind: refusal,
			volumes: []corev1.Volume{vol("p", corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{Path: "b"}}}}})},
			want: "spec.volumes[0].projected.sources[0].clusterTrustBundle: not supported on this node"},
		{name: "projected podCertificate", kind: refusal,
			volumes: []corev1.Volume{vol("p", corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{PodCertificate: &corev1.PodCertificateProjection{SignerName: "x/y"}}}}})},
			want: "spec.volumes[0].projected.sources[0].podCertificate: not supported on this node"},
		{name: "projected empty source", kind: refusal,
			volumes: []corev1.Volume{vol("p", corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{{}}}})},
			want:    "spec.volumes[0].projected.sources[0]: no source set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{AllowedHostPaths: []string{allowed}}
			if tt.cfg != nil {
				cfg = *tt.cfg
			}
			te := newTestEnv(t, cfg, objs...)
			pod := testPod(tt.volumes...)
			vols, _, err := te.m.Setup(context.Background(), pod, env.PodFacts{}, nil)
			t.Cleanup(func() { _ = te.m.Teardown(context.Background(), pod.UID) })
			require.Error(t, err)
			assert.Nil(t, vols)
			assert.Contains(t, err.Error(), tt.want)
			var fe *FieldError
			var me *MissingObjectError
			switch tt.kind {
			case refusal:
				assert.True(t, errors.As(err, &fe), "a *FieldError: %v", err)
			case missing:
				require.True(t, errors.As(err, &me), "a *MissingObjectError: %v", err)
				assert.False(t, errors.As(err, &fe))
				if me.Key == "" {
					assert.True(t, apierrors.IsNotFound(errors.Unwrap(me)), "wraps the NotFound")
				}
			case retry:
				assert.False(t, errors.As(err, &fe), "not a refusal: %v", err)
				assert.False(t, errors.As(err, &me))
			}
		})
	}
	// No refused hostPath created anything where its links lead.
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	assert.Empty(t, entries)
}

// Trust follows the source: a static pod's manifest is the node administrator's, and it may
// mount any host path (as the kubelet lets it) unless RestrictStaticPods holds it to the
// prefixes that govern API pods; its refusal then names the flag that did.
func TestSetupHostPathStaticPods(t *testing.T) {
	hostDir := t.TempDir()
	static := func() *corev1.Pod {
		pod := testPod(corev1.Volume{Name: "h", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: hostDir}}})
		pod.Annotations = map[string]string{podutil.ConfigSourceAnnotationKey: podutil.FileSource}
		return pod
	}

	te := newTestEnv(t, Config{HostPathFlag: "--process-allowed-host-paths"})
	pod := static()
	vols, _, err := te.m.Setup(context.Background(), pod, env.PodFacts{}, nil)
	require.NoError(t, err, "a static pod may mount any host path")
	assert.Equal(t, hostDir, vols["h"])
	require.NoError(t, te.m.Teardown(context.Background(), pod.UID))

	api := static()
	api.Annotations[podutil.ConfigSourceAnnotationKey] = podutil.APIServerSource
	_, _, err = te.m.Setup(context.Background(), api, env.PodFacts{}, nil)
	assert.ErrorContains(t, err, "an API pod's hostPath volumes are not allowed on this node: --process-allowed-host-paths names no allowed prefix")
	require.NoError(t, te.m.Teardown(context.Background(), api.UID))

	te = newTestEnv(t, Config{HostPathFlag: "--process-allowed-host-paths", RestrictStaticPods: true, RestrictStaticPodsFlag: "--process-restrict-static-pods"})
	pod = static()
	_, _, err = te.m.Setup(context.Background(), pod, env.PodFacts{}, nil)
	var fe *FieldError
	require.ErrorAs(t, err, &fe)
	assert.ErrorContains(t, err, "a static pod's (held to the API pods' rules by --process-restrict-static-pods) hostPath volumes are not allowed on this node: --process-allowed-host-paths names no allowed prefix")
	require.NoError(t, te.m.Teardown(context.Background(), pod.UID))
}

func TestSetupWithoutAPIServer(t *testing.T) {
	m, err := New(Config{PodsDir: t.TempDir()})
	require.NoError(t, err)
	pod := testPod(
		vol("c", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}),
		vol("d", corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
			{Path: "name", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}}),
	)
	_, _, err = m.Setup(context.Background(), pod, env.PodFacts{}, nil)
	var fe *FieldError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "spec.volumes[0].configMap: ConfigMap volumes need the API server, and this agent runs without one", fe.Error())

	// The downwardAPI volume needs no API server.
	pod.Spec.Volumes = pod.Spec.Volumes[1:]
	vols, _, err := m.Setup(context.Background(), pod, env.PodFacts{}, nil)
	require.NoError(t, err)
	assert.Equal(t, "web", readFile(t, filepath.Join(vols["d"], "name")))
	require.NoError(t, m.Teardown(context.Background(), pod.UID))
}

func TestSetupReportsEveryFailure(t *testing.T) {
	te := newTestEnv(t, Config{})
	pod := testPod(
		vol("a", corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{}}),
		vol("ok", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}),
		vol("b", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "absent"}}}),
	)
	_, _, err := te.m.Setup(context.Background(), pod, env.PodFacts{}, nil)
	t.Cleanup(func() { _ = te.m.Teardown(context.Background(), pod.UID) })
	require.Error(t, err)
	assert.Contains(t, err.Error(), "spec.volumes[0].nfs")
	assert.Contains(t, err.Error(), "spec.volumes[2].configMap")
	var me *MissingObjectError
	assert.ErrorAs(t, err, &me)
}

func TestSetupChecksThePodUID(t *testing.T) {
	te := newTestEnv(t, Config{})
	for _, uid := range []string{"", "..", "a/b"} {
		pod := testPod()
		pod.UID = typesUID(uid)
		_, _, err := te.m.Setup(context.Background(), pod, env.PodFacts{}, nil)
		assert.Error(t, err, "uid %q", uid)
		assert.Error(t, te.m.Teardown(context.Background(), pod.UID), "uid %q", uid)
	}
}

// Setup after an agent restart (a new Manager on the same directory) keeps what is there.
func TestSetupAgainKeepsWhatIsThere(t *testing.T) {
	te := newTestEnv(t, Config{}, configMap("cfg", map[string]string{"a": "A"}))
	pod := testPod(
		vol("scratch", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}),
		vol("conf", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}),
	)
	vols, _ := setup(t, te, pod)
	require.NoError(t, os.WriteFile(filepath.Join(vols["scratch"], "work"), []byte("w"), 0o600))
	confVersion := tsDirs(t, vols["conf"])

	m2, err := New(Config{PodsDir: te.podsDir, Objects: nodeobjects.NewClientGetter(kubeclienttest.Wrap(te.client))})
	require.NoError(t, err)
	vols2, warnings, err := m2.Setup(context.Background(), pod, env.PodFacts{}, nil)
	require.NoError(t, err)
	assert.Empty(t, warnings)
	assert.Equal(t, vols, vols2)
	assert.Equal(t, "w", readFile(t, filepath.Join(vols["scratch"], "work")))
	assert.Equal(t, confVersion, tsDirs(t, vols["conf"]), "unchanged content is not rewritten")
}

// Setup, Refresh and Teardown of one pod from several goroutines: the per-pod lock keeps
// them from interleaving (the race detector and the final state say whether it did).
func TestConcurrentCallsForOnePod(t *testing.T) {
	te := newTestEnv(t, Config{}, configMap("cfg", map[string]string{"a": "A"}))
	pod := testPod(
		vol("scratch", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}),
		vol("conf", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}),
	)
	other := testPod(vol("scratch", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}))
	other.UID = "uid-2"
	ctx := context.Background()
	done := make(chan error, 30)
	for i := range 10 {
		go func() {
			_, _, err := te.m.Setup(ctx, pod, env.PodFacts{}, nil)
			done <- err
		}()
		go func() {
			_, err := te.m.Refresh(ctx, pod, env.PodFacts{}, nil)
			done <- err
		}()
		go func() {
			var err error
			if i%2 == 0 {
				err = te.m.Teardown(ctx, pod.UID)
			} else {
				_, _, err = te.m.Setup(ctx, other, env.PodFacts{}, nil)
			}
			done <- err
		}()
	}
	for range 30 {
		require.NoError(t, <-done)
	}
	// Refresh after a Teardown makes nothing again.
	require.NoError(t, te.m.Teardown(ctx, pod.UID))
	changed, err := te.m.Refresh(ctx, pod, env.PodFacts{}, nil)
	require.NoError(t, err)
	assert.False(t, changed)
	assert.NoDirExists(t, te.m.volumesDir(pod.UID))

	vols, _, err := te.m.Setup(ctx, pod, env.PodFacts{}, nil)
	require.NoError(t, err)
	assert.Equal(t, "A", readFile(t, filepath.Join(vols["conf"], "a")))
	require.NoError(t, te.m.Teardown(ctx, pod.UID))
	require.NoError(t, te.m.Teardown(ctx, other.UID))
	assert.Empty(t, te.m.locks.locks, "no lock left behind")
}

func TestNewChecksTheConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{name: "no PodsDir", cfg: Config{}, want: `volume: PodsDir "" must be an absolute path`},
		{name: "relative PodsDir", cfg: Config{PodsDir: "pods"}, want: `volume: PodsDir "pods" must be an absolute path`},
		{name: "relative allowed host path", cfg: Config{PodsDir: t.TempDir(), AllowedHostPaths: []string{"srv"}},
			want: `volume: allowed host path "srv" must be absolute`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg)
			assert.EqualError(t, err, tt.want)
		})
	}
}
