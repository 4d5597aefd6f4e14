package process

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/lifecycle"
)

// A pod's fsGroup is a supplementary group of each of its containers, as the kubelet's, so that
// a container of another user reads a volume file the fsGroup was given: the e2e specs "as
// non-root with defaultMode and fsGroup set" (a 0440 file of root and the fsGroup).
func TestFSGroupIsASupplementaryGroup(t *testing.T) {
	requireRoot(t)
	const fsGroup = 4321
	r := newTestRuntime(t, Config{})
	dir, err := os.MkdirTemp("", "fsgroup")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	secret := filepath.Join(dir, "data-1")
	require.NoError(t, os.WriteFile(secret, []byte("value-1\n"), 0o440))
	require.NoError(t, os.Chmod(secret, 0o440))
	require.NoError(t, os.Lchown(secret, 0, fsGroup))

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "uid-1"},
		Spec:       corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{FSGroup: ptr.To[int64](fsGroup)}},
	}
	for _, tc := range []struct {
		name       string
		user       *lifecycle.User
		wantGroups string
	}{
		{"the default user", nil, "65534 4321"},
		{"the pod's user and groups", &lifecycle.User{UID: 1234, GID: 2345, SupplementalGroups: []int64{3456}}, "2345 3456 4321"},
		{"the fsGroup named again", &lifecycle.User{UID: 1234, GID: 2345, SupplementalGroups: []int64{fsGroup}}, "2345 4321"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A volume, as a secret's: an API pod does not see the host's /tmp.
			id := run(t, r, lifecycle.ContainerConfig{
				Command: []string{"sh", "-c", `id -G; cat /tmp/volume/data-1`},
				User:    tc.user,
				Pod:     pod,
				Mounts:  []lifecycle.Mount{{HostPath: dir, ContainerPath: "/tmp/volume"}},
			})
			s := waitExited(t, r, id)
			require.Equal(t, int32(0), s.ExitCode, "%+v", readLog(t, s.LogPath))
			assert.Equal(t, []string{tc.wantGroups, "value-1"}, logContents(t, s.LogPath, "stdout"))
		})
	}
}
