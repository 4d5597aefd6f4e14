package e2ecri

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// TestRefusedUpFront: what the runtime cannot or may not run is refused before a sandbox is
// made, as the pod's Failed status naming what to change — a pod-network pod on a runtime
// without a CNI network (spec.hostNetwork), a privileged container without --allow-privileged
// — and the pod already running goes on untouched.
func TestRefusedUpFront(t *testing.T) {
	a := startAgent(t)
	rs := runtimeService(t)
	a.writePod(imagePod("bystander", workloadImage, "sleep"))
	bystander := mainStatus(a.waitMirror("bystander", 60*time.Second, "Running", mainRunning))
	netnsBefore := netns(t)

	podNetwork := imagePod("pod-network", workloadImage, "sleep")
	podNetwork.Spec.HostNetwork = false
	a.writePod(podNetwork)
	privileged := imagePod("privileged", workloadImage, "sleep")
	privileged.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
	a.writePod(privileged)

	for name, want := range map[string]string{"pod-network": "spec.hostNetwork", "privileged": "--allow-privileged"} {
		p := a.waitMirror(name, 30*time.Second, "Failed", podFailed)
		assert.Contains(t, p.Status.Message, want, "%s", name)
		cs := mainStatus(p)
		assert.True(t, cs == nil || (cs.State.Running == nil && cs.ContainerID == ""), "%s: a container was made: %s", name, describe(cs))
	}
	sandboxes, err := rs.ListPodSandbox(t.Context(), nil)
	require.NoError(t, err)
	assert.Len(t, sandboxes, 1, "sandboxes: only the bystander's")
	assert.Equal(t, netnsBefore, netns(t), "network namespaces")

	now := mainStatus(a.waitMirror("bystander", 10*time.Second, "Running", mainRunning))
	assert.Equal(t, bystander.ContainerID, now.ContainerID)
	assert.Equal(t, int32(0), now.RestartCount)

	a.removePods("bystander", "pod-network", "privileged")
	nothingLeft(t)
}

// netns lists the network namespaces mounted under the containerd's directories (a failed
// pod-network sandbox leaves one).
func netns(t *testing.T) []string {
	t.Helper()
	mounts, err := mountsUnder(cd.Dir())
	require.NoError(t, err)
	var out []string
	for _, m := range mounts {
		if strings.Contains(m, "netns") {
			out = append(out, m)
		}
	}
	return out
}
