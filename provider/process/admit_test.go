package process

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/lifecycle"
)

func TestAdmit(t *testing.T) {
	nobody := &lifecycle.User{UID: 65534, GID: 65534}
	root := &lifecycle.User{}
	pod := func(podSC *corev1.PodSecurityContext, sc *corev1.SecurityContext) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{
			SecurityContext: podSC,
			InitContainers:  []corev1.Container{{Name: "init"}},
			Containers:      []corev1.Container{{Name: "a"}, {Name: "b", SecurityContext: sc}},
		}}
	}
	for _, tc := range []struct {
		name        string
		defaultUser *lifecycle.User
		allowRoot   bool
		pod         *corev1.Pod
		err         string
	}{
		{"default nobody", nobody, false, pod(nil, nil), ""},
		{"runAsUser 0 refused", nobody, false, pod(nil, &corev1.SecurityContext{RunAsUser: ptr.To[int64](0)}),
			"spec.containers[1].securityContext.runAsUser: 0 (root) is not allowed: start the agent with --process-allow-root"},
		{"pod runAsUser 0 refused", nobody, false, pod(&corev1.PodSecurityContext{RunAsUser: ptr.To[int64](0)}, nil),
			"spec.securityContext.runAsUser: 0 (root) is not allowed: start the agent with --process-allow-root"},
		{"container overrides the pod's root", nobody, false, &corev1.Pod{Spec: corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](0)},
			Containers:      []corev1.Container{{Name: "a", SecurityContext: &corev1.SecurityContext{RunAsUser: ptr.To[int64](1000)}}},
		}}, ""},
		{"runAsUser 0 allowed", nobody, true, pod(nil, &corev1.SecurityContext{RunAsUser: ptr.To[int64](0)}), ""},
		{"default root refused", root, false, pod(nil, nil),
			"spec.initContainers[0].securityContext.runAsUser: not set and the process provider's default user is root, which is not allowed: set runAsUser, or start the agent with --process-allow-root"},
		{"runAsNonRoot with root", nobody, true, pod(&corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true)}, &corev1.SecurityContext{RunAsUser: ptr.To[int64](0)}),
			"spec.securityContext.runAsNonRoot: true, but spec.containers[1].securityContext.runAsUser is 0 (root)"},
		{"runAsNonRoot with the default root", root, true, pod(nil, &corev1.SecurityContext{RunAsNonRoot: ptr.To(true)}),
			"spec.containers[1].securityContext.runAsNonRoot: true, but the container would run as root (the process provider's default user is root and no runAsUser is set)"},
		{"privileged", nobody, true, pod(nil, &corev1.SecurityContext{Privileged: ptr.To(true)}),
			"spec.containers[1].securityContext.privileged: true is not supported"},
		{"capabilities.add", nobody, true, pod(nil, &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_ADMIN"}}}),
			"spec.containers[1].securityContext.capabilities.add: [NET_ADMIN] is not supported"},
		{"capabilities.drop is fine", nobody, false, pod(nil, &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Runtime{cfg: Config{AllowRoot: tc.allowRoot}, root: true, defaultUser: tc.defaultUser}
			err := r.Admit(tc.pod)
			if tc.err == "" {
				assert.NoError(t, err)
				return
			}
			if assert.Error(t, err) {
				assert.Contains(t, err.Error(), tc.err)
			}
		})
	}

	t.Run("agent not root", func(t *testing.T) {
		r := &Runtime{root: false, defaultUser: &lifecycle.User{UID: 1000, GID: 1000}}
		assert.NoError(t, r.Admit(pod(nil, nil)))
		assert.NoError(t, r.Admit(pod(nil, &corev1.SecurityContext{RunAsUser: ptr.To[int64](1000)})))
		err := r.Admit(pod(nil, &corev1.SecurityContext{RunAsUser: ptr.To[int64](0)}))
		if assert.Error(t, err) {
			assert.Contains(t, err.Error(), "spec.containers[1].securityContext.runAsUser: 0 is not allowed: the agent is not root")
		}
	})
}

func TestResolveUser(t *testing.T) {
	for _, tc := range []struct {
		spec     string
		uid, gid int64
	}{
		{"", 65534, 65534},
		{"nobody", 65534, 65534},
		{"1234", 1234, 1234},
		{"1234:99", 1234, 99},
		{"0", 0, 0},
	} {
		u, err := resolveUser(tc.spec)
		if assert.NoError(t, err, tc.spec) {
			assert.Equal(t, tc.uid, u.UID, tc.spec)
			assert.Equal(t, tc.gid, u.GID, tc.spec)
		}
	}
	_, err := resolveUser("no-such-user-here")
	assert.Error(t, err)
}
