package cri

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/lifecycle"
)

// An ephemeral container with a target joins the target's PID namespace (TARGET with its ID),
// as the kubelet's; in a pod that shares one already, or on the node's, it stays there.
func TestEphemeralContainerJoinsItsTargetsProcessNamespace(t *testing.T) {
	sandbox := &runtimeapi.PodSandboxConfig{LogDirectory: "/logs"}
	for _, tc := range []struct {
		name     string
		pod      corev1.PodSpec
		target   string
		wantPid  runtimeapi.NamespaceMode
		wantTarg string
	}{
		{name: "target", target: "abc", wantPid: runtimeapi.NamespaceMode_TARGET, wantTarg: "abc"},
		{name: "no target", wantPid: runtimeapi.NamespaceMode_CONTAINER},
		{name: "shared process namespace", pod: corev1.PodSpec{ShareProcessNamespace: ptr.To(true)}, target: "abc", wantPid: runtimeapi.NamespaceMode_POD},
		{name: "host PID", pod: corev1.PodSpec{HostPID: true}, target: "abc", wantPid: runtimeapi.NamespaceMode_NODE},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &lifecycle.ContainerConfig{Name: "debugger", LogPath: "/logs/debugger/0.log", TargetContainerID: tc.target,
				Pod: &corev1.Pod{Spec: tc.pod}, Container: &corev1.Container{Name: "debugger"}}
			cc, err := containerConfig(cfg, sandbox, "")
			require.NoError(t, err)
			ns := cc.Linux.SecurityContext.NamespaceOptions
			assert.Equal(t, tc.wantPid, ns.Pid)
			assert.Equal(t, tc.wantTarg, ns.TargetId)
		})
	}
}

func TestAdmitEphemeralRefusesPrivilegedWithoutTheFlag(t *testing.T) {
	r := &Runtime{}
	c := &corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debugger",
		SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)}}}
	assert.EqualError(t, r.AdmitEphemeral(&corev1.Pod{}, c, "spec.ephemeralContainers[1]"),
		"spec.ephemeralContainers[1].securityContext.privileged: privileged containers are not allowed on this node (--allow-privileged)")
	r.cfg.AllowPrivileged = true
	assert.NoError(t, r.AdmitEphemeral(&corev1.Pod{}, c, "spec.ephemeralContainers[1]"))
	assert.NoError(t, (&Runtime{}).AdmitEphemeral(&corev1.Pod{}, &corev1.EphemeralContainer{}, "spec.ephemeralContainers[0]"))
}
