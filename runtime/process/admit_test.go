package process

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/lifecycle"
	"github.com/vk-static/vk-static/podutil"
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
			"spec.containers[1].securityContext.runAsUser: 0 (root) is not allowed for an API pod (static pods run as their manifest says): start the agent with --process-allow-root"},
		{"pod runAsUser 0 refused", nobody, false, pod(&corev1.PodSecurityContext{RunAsUser: ptr.To[int64](0)}, nil),
			"spec.securityContext.runAsUser: 0 (root) is not allowed for an API pod (static pods run as their manifest says): start the agent with --process-allow-root"},
		{"container overrides the pod's root", nobody, false, &corev1.Pod{Spec: corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](0)},
			Containers:      []corev1.Container{{Name: "a", SecurityContext: &corev1.SecurityContext{RunAsUser: ptr.To[int64](1000)}}},
		}}, ""},
		{"runAsUser 0 allowed", nobody, true, pod(nil, &corev1.SecurityContext{RunAsUser: ptr.To[int64](0)}), ""},
		{"default root refused", root, false, pod(nil, nil),
			"spec.initContainers[0].securityContext.runAsUser: not set and the process provider's default user (--process-default-user) is root, which is not allowed for an API pod (static pods run as their manifest says): set runAsUser, or start the agent with --process-allow-root"},
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

// Trust follows the source: a static pod runs as its manifest says — root when it names no
// user, privileged and capabilities.add allowed as root holds them all — whatever
// --process-default-user and --process-allow-root say; --process-restrict-static-pods holds it
// to the API pods' rules, and the refusal names that flag.
func TestAdmitStaticPods(t *testing.T) {
	nobody := &lifecycle.User{UID: 65534, GID: 65534}
	static := func(source string, sc *corev1.SecurityContext) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{podutil.ConfigSourceAnnotationKey: source}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "a", SecurityContext: sc}}},
		}
	}
	trusting := &Runtime{root: true, defaultUser: nobody}
	for _, source := range []string{podutil.FileSource, podutil.HTTPSource} {
		assert.NoError(t, trusting.Admit(static(source, nil)), source)
		assert.NoError(t, trusting.Admit(static(source, &corev1.SecurityContext{RunAsUser: ptr.To[int64](0)})), source)
		assert.NoError(t, trusting.Admit(static(source, &corev1.SecurityContext{Privileged: ptr.To(true)})), source)
		assert.NoError(t, trusting.Admit(static(source, &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_ADMIN"}}})), source)
		assert.Equal(t, &lifecycle.User{}, trusting.containerUser(&lifecycle.ContainerConfig{Pod: static(source, nil)}), "root when the manifest names no user")
	}
	// A static pod that names a user other than root has that user's rights only.
	err := trusting.Admit(static(podutil.FileSource, &corev1.SecurityContext{RunAsUser: ptr.To[int64](1000), Privileged: ptr.To(true)}))
	assert.ErrorContains(t, err, "spec.containers[0].securityContext.privileged: true is not supported for a static pod that does not run as root")
	err = trusting.Admit(static(podutil.FileSource, &corev1.SecurityContext{RunAsNonRoot: ptr.To(true)}))
	assert.ErrorContains(t, err, "spec.containers[0].securityContext.runAsNonRoot: true, but the container would run as root (a static pod that names no runAsUser runs as root")
	assert.NoError(t, trusting.Admit(static(podutil.FileSource, &corev1.SecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](1000)})))

	// The same pod from the API server is held to the flags.
	api := static(podutil.APIServerSource, nil)
	assert.ErrorContains(t, (&Runtime{root: true, defaultUser: &lifecycle.User{}}).Admit(api), "is not allowed for an API pod")
	assert.NoError(t, trusting.Admit(api))
	assert.Equal(t, nobody, trusting.containerUser(&lifecycle.ContainerConfig{Pod: api}))

	restricting := &Runtime{cfg: Config{RestrictStaticPods: true}, root: true, defaultUser: nobody}
	assert.NoError(t, restricting.Admit(static(podutil.FileSource, nil)))
	assert.Equal(t, nobody, restricting.containerUser(&lifecycle.ContainerConfig{Pod: static(podutil.FileSource, nil)}))
	err = restricting.Admit(static(podutil.FileSource, &corev1.SecurityContext{RunAsUser: ptr.To[int64](0)}))
	assert.ErrorContains(t, err, "spec.containers[0].securityContext.runAsUser: 0 (root) is not allowed for a static pod held to the API pods' rules by --process-restrict-static-pods: start the agent with --process-allow-root")
	err = restricting.Admit(static(podutil.HTTPSource, &corev1.SecurityContext{Privileged: ptr.To(true)}))
	assert.ErrorContains(t, err, "privileged: true is not supported for a static pod held to the API pods' rules by --process-restrict-static-pods")
}

// The lifecycle marks what a pod leaves unsaid with -1: the default fills it in.
func TestContainerUser(t *testing.T) {
	r := &Runtime{root: true, defaultUser: &lifecycle.User{UID: 65534, GID: 65534}}
	got := r.containerUser(&lifecycle.ContainerConfig{User: &lifecycle.User{UID: -1, GID: 5}})
	assert.Equal(t, &lifecycle.User{UID: 65534, GID: 5}, got)
	got = r.containerUser(&lifecycle.ContainerConfig{User: &lifecycle.User{UID: 54321, GID: -1}})
	assert.Equal(t, &lifecycle.User{UID: 54321, GID: 54321}, got, "an unknown uid is its own group")
	got = r.containerUser(&lifecycle.ContainerConfig{User: &lifecycle.User{UID: 0, GID: -1}})
	assert.Equal(t, &lifecycle.User{UID: 0, GID: 0}, got, "root's primary group")
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
