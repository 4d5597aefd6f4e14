package e2ecri

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	criclient "k8s.io/cri-client/pkg"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/test/support/podwait"
	"github.com/vk-static/vk-static/test/support/testcontainerd"
)

// TestRefusedUpFront: what the runtime cannot or may not run is refused before a sandbox is
// made, as the pod's Failed status naming what to change — a pod-network pod on a runtime
// without a CNI network (spec.hostNetwork; a containerd of the test's own, the package's has a
// bridge network), a privileged container without --allow-privileged — and the pod already
// running goes on untouched.
func TestRefusedUpFront(t *testing.T) {
	noNetwork, err := testcontainerd.Start(t.Context(), testcontainerd.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, noNetwork.Stop()) }) // registered first: runs last
	for _, c := range []struct {
		name string
		cd   *testcontainerd.Containerd
		pod  func(*corev1.Pod)
		want string
	}{
		{"pod-network", noNetwork, func(p *corev1.Pod) { p.Spec.HostNetwork = false }, "spec.hostNetwork"},
		{"privileged", cd, func(p *corev1.Pod) {
			p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
		}, "--allow-privileged"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := startAgentOn(t, c.cd)
			rs, err := criclient.NewRemoteRuntimeService(t.Context(), c.cd.Endpoint(), 10*time.Second, nil, false)
			require.NoError(t, err)
			t.Cleanup(func() { _ = rs.Close(context.Background()) })
			a.writePod(imagePod("bystander", workloadImage, "sleep"))
			bystander := podwait.MainStatus(a.waitMirror("bystander", 60*time.Second, "Running", podwait.MainRunning))
			netnsBefore := podNetNamespaces(t, c.cd)

			refused := imagePod(c.name, workloadImage, "sleep")
			c.pod(refused)
			a.writePod(refused)
			p := a.waitMirror(c.name, 30*time.Second, "Failed", podFailed)
			assert.Contains(t, p.Status.Message, c.want)
			cs := podwait.MainStatus(p)
			assert.True(t, cs == nil || (cs.State.Running == nil && cs.ContainerID == ""), "a container was made: %s", podwait.Describe(cs))
			sandboxes, err := rs.ListPodSandbox(t.Context(), nil)
			require.NoError(t, err)
			assert.Len(t, sandboxes, 1, "sandboxes: only the bystander's")
			assert.Equal(t, netnsBefore, podNetNamespaces(t, c.cd), "network namespaces")

			now := podwait.MainStatus(a.waitMirror("bystander", 10*time.Second, "Running", podwait.MainRunning))
			assert.Equal(t, bystander.ContainerID, now.ContainerID)
			assert.Equal(t, int32(0), now.RestartCount)

			a.removePods("bystander", c.name)
			requireNothingLeft(t, c.cd, 30*time.Second)
		})
	}
}

// podNetNamespaces lists the network namespaces mounted under containerd c's directories (a
// failed pod-network sandbox leaves one).
func podNetNamespaces(t *testing.T, c *testcontainerd.Containerd) []string {
	t.Helper()
	mounts, err := mountsUnder(c.Dir())
	require.NoError(t, err)
	var out []string
	for _, m := range mounts {
		if strings.Contains(m, "netns") {
			out = append(out, m)
		}
	}
	return out
}
