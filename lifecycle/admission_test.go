package lifecycle

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/version"
)

// A pod the kubelet's own admission refuses is Failed as the kubelet writes it: its reason,
// "Pod was rejected: " and its message; nothing runs, and a restarted agent says the same.
func TestKubeletAdmissionRefusals(t *testing.T) {
	for _, tc := range []struct {
		name        string
		mutate      func(*corev1.Pod)
		reason, msg string
	}{
		{name: "windows", mutate: func(p *corev1.Pod) { p.Spec.OS = &corev1.PodOS{Name: corev1.Windows} },
			reason: "PodOSNotSupported", msg: "Pod was rejected: Failed to admit pod as the OS field doesn't match node OS"},
		{name: "os label", mutate: func(p *corev1.Pod) { p.Labels = map[string]string{"kubernetes.io/os": "windows"} },
			reason: "PodOSSelectorNodeLabelDoesNotMatch", msg: "Pod was rejected: Failed to admit pod as the `kubernetes.io/os` label doesn't match node label"},
		{name: "unsafe sysctl", mutate: func(p *corev1.Pod) {
			p.Spec.SecurityContext = &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{{Name: "kernel.shm_rmid_forced", Value: "1"}, {Name: "kernel.msgmax", Value: "10000"}}}
		}, reason: "SysctlForbidden", msg: `Pod was rejected: forbidden sysctl: "kernel.msgmax" not allowlisted`},
		{name: "runtime", mutate: func(*corev1.Pod) {}, reason: "NotAdmitted", msg: "Pod was rejected: spec.containers[0]: not here (--allow-it)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			if tc.reason == "NotAdmitted" {
				h.rt.refuse = "spec.containers[0]: not here (--allow-it)"
			}
			pod := testPod("ad", corev1.RestartPolicyAlways, ctr("app", "sleep", "1000"))
			tc.mutate(pod)
			require.NoError(t, h.p.CreatePod(context.Background(), pod))
			h.eventually(pod.UID, "Failed", func(s *corev1.PodStatus) bool { return s.Phase == corev1.PodFailed })
			s := h.status(pod.UID)
			assert.Equal(t, tc.reason, s.Reason)
			assert.Equal(t, tc.msg, s.Message)
			assert.Empty(t, h.rt.calls(), "nothing starts")
			assert.Contains(t, strings.Join(h.drainEvents(), "\n"), "Warning "+tc.reason+" "+strings.TrimPrefix(tc.msg, "Pod was rejected: "))

			h.stop()
			h.start()
			got, err := h.p.GetPodStatus(context.Background(), pod.Namespace, pod.Name)
			require.NoError(t, err)
			assert.Equal(t, tc.reason, got.Reason, "after a restart")
			assert.Equal(t, tc.msg, got.Message, "after a restart")
		})
	}
}

func TestSysctlAllowlist(t *testing.T) {
	kernel := version.MustParseGeneric("6.1.0")
	pod := func(hostNet bool, names ...string) *corev1.Pod {
		p := testPod("s", corev1.RestartPolicyAlways)
		p.Spec.HostNetwork = hostNet
		p.Spec.SecurityContext = &corev1.PodSecurityContext{}
		for _, n := range names {
			p.Spec.SecurityContext.Sysctls = append(p.Spec.SecurityContext.Sysctls, corev1.Sysctl{Name: n, Value: "1"})
		}
		return p
	}
	for _, tc := range []struct {
		name    string
		old     bool // a kernel older than the newer safe sysctls
		unsafe  []string
		pod     *corev1.Pod
		refused string
	}{
		{name: "safe", pod: pod(false, "kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.tcp_rmem")},
		{name: "safe with slashes", pod: pod(false, "net/ipv4/ip_local_port_range")},
		{name: "safe only on a newer kernel", old: true, pod: pod(false, "net.ipv4.tcp_rmem"), refused: `forbidden sysctl: "net.ipv4.tcp_rmem" not allowlisted`},
		{name: "unsafe", pod: pod(false, "kernel.msgmax"), refused: `forbidden sysctl: "kernel.msgmax" not allowlisted`},
		{name: "allowed unsafe", unsafe: []string{"kernel.msgmax"}, pod: pod(false, "kernel.msgmax")},
		{name: "allowed unsafe pattern", unsafe: []string{"net.core.*"}, pod: pod(false, "net.core.somaxconn")},
		{name: "net with host network", pod: pod(true, "net.ipv4.ip_local_port_range"),
			refused: `forbidden sysctl: "net.ipv4.ip_local_port_range" not allowed with host Net enabled`},
		{name: "ipc with host ipc", pod: func() *corev1.Pod { p := pod(false, "kernel.shm_rmid_forced"); p.Spec.HostIPC = true; return p }(),
			refused: `forbidden sysctl: "kernel.shm_rmid_forced" not allowed with host IPC enabled`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := kernel
			if tc.old {
				k = version.MustParseGeneric("4.4.0")
			}
			w, err := newSysctlAllowlist(k, tc.unsafe)
			require.NoError(t, err)
			err = w.admit(tc.pod)
			if tc.refused == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Equal(t, tc.refused, err.Error())
			assert.Equal(t, "SysctlForbidden", refusalReason(err))
		})
	}
}

// A pattern the kubelet refuses at start-up is refused, naming the flag.
func TestSysctlAllowlistRefusesBadPatterns(t *testing.T) {
	for pattern, want := range map[string]string{
		"kernel.msg*x":  "must have at most 253 characters and match regex",
		"Kernel.msgmax": "must have at most 253 characters and match regex",
		"vm.swappiness": `the sysctls "vm.swappiness" are not known to be namespaced`,
		"kernel.*":      `the sysctls "kernel." are not known to be namespaced`,
	} {
		err := ValidateAllowedUnsafeSysctls([]string{pattern})
		require.Error(t, err, pattern)
		assert.Contains(t, err.Error(), want, pattern)
	}
	_, err := New(context.Background(), Config{Runtime: newFakeRuntime(nil), RuntimeName: "fake", RootDir: t.TempDir(), AllowedUnsafeSysctls: []string{"vm.swappiness"}})
	assert.ErrorContains(t, err, "--allowed-unsafe-sysctls")
}
