package process

import (
	"errors"
	"os/user"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
			Containers:      []corev1.Container{{Name: "a", SecurityContext: &corev1.SecurityContext{RunAsUser: ptr.To[int64](1500)}}},
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
			r := &Runtime{cfg: Config{AllowRoot: tc.allowRoot}, root: true, defaultUser: tc.defaultUser, hostAccounts: testAccounts}
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

// testAccounts are a host's users and groups for tests, in place of the machine's.
var testAccounts = fakeAccounts{
	users: map[int64]fakeUser{
		1: {"daemon", 1}, 1000: {"alice", 1000}, 2000: {"bob", 0}, 65534: {"nobody", 65534},
	},
	groups: map[int64]string{0: "root", 1: "daemon", 6: "disk", 1000: "alice", 1600: "docker", 65534: "nogroup"},
}

type fakeUser struct {
	name string
	gid  int64
}

type fakeAccounts struct {
	users  map[int64]fakeUser
	groups map[int64]string
	err    error
}

func (a fakeAccounts) user(uid int64) (string, int64, bool, error) {
	u, ok := a.users[uid]
	return u.name, u.gid, ok, a.err
}

func (a fakeAccounts) group(gid int64) (string, bool, error) {
	name, ok := a.groups[gid]
	return name, ok, a.err
}

// Groups are held to the users' rule: 0 needs --process-allow-root, and the host's ids — those
// /etc/passwd and /etc/group name, and every id below 1000 — need --process-allowed-uids or
// --process-allowed-gids, except the default user's; each refusal names the field and the flag.
func TestAdmitIDs(t *testing.T) {
	const apiPod = " is not allowed for an API pod (static pods run as their manifest says): "
	nobody := &lifecycle.User{UID: 65534, GID: 65534}
	pod := func(podSC *corev1.PodSecurityContext, sc *corev1.SecurityContext) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{
			SecurityContext: podSC,
			InitContainers:  []corev1.Container{{Name: "init"}},
			Containers:      []corev1.Container{{Name: "a"}, {Name: "b", SecurityContext: sc}},
		}}
	}
	user := func(uid int64) *corev1.SecurityContext { return &corev1.SecurityContext{RunAsUser: ptr.To(uid)} }
	group := func(gid int64) *corev1.SecurityContext { return &corev1.SecurityContext{RunAsGroup: ptr.To(gid)} }
	groups := func(gids ...int64) *corev1.PodSecurityContext {
		return &corev1.PodSecurityContext{SupplementalGroups: gids}
	}
	fsGroup := func(gid int64) *corev1.PodSecurityContext { return &corev1.PodSecurityContext{FSGroup: ptr.To(gid)} }
	for _, tc := range []struct {
		name        string
		cfg         Config
		defaultUser *lifecycle.User
		accounts    hostAccounts
		pod         *corev1.Pod
		err         string
	}{
		// Root's group.
		{name: "runAsGroup 0", pod: pod(nil, group(0)),
			err: "spec.containers[1].securityContext.runAsGroup: 0 (root)" + apiPod + "start the agent with --process-allow-root"},
		{name: "pod runAsGroup 0", pod: pod(&corev1.PodSecurityContext{RunAsGroup: ptr.To[int64](0)}, nil),
			err: "spec.securityContext.runAsGroup: 0 (root)" + apiPod + "start the agent with --process-allow-root"},
		{name: "supplementalGroups [0]", pod: pod(groups(0), nil),
			err: "spec.securityContext.supplementalGroups[0]: 0 (root)" + apiPod + "start the agent with --process-allow-root"},
		{name: "fsGroup 0", pod: pod(fsGroup(0), nil),
			err: "spec.securityContext.fsGroup: 0 (root)" + apiPod + "start the agent with --process-allow-root"},
		{name: "group 0 with --process-allow-root", cfg: Config{AllowRoot: true}, pod: pod(&corev1.PodSecurityContext{RunAsGroup: ptr.To[int64](0), SupplementalGroups: []int64{0}, FSGroup: ptr.To[int64](0)}, nil)},
		{name: "a user whose primary group is root", cfg: Config{AllowedUIDs: []IDRange{{2000, 2000}}}, pod: pod(nil, user(2000)),
			err: "spec.containers[1].securityContext.runAsGroup: not set, so the container would run with group 0 (root), uid 2000's primary group on the host, which" + apiPod + "set runAsGroup, or start the agent with --process-allow-root"},
		{name: "a default user whose group is root", defaultUser: &lifecycle.User{UID: 1500, GID: 0}, pod: pod(nil, nil),
			err: "spec.initContainers[0].securityContext.runAsGroup: not set, so the container would run with group 0 (root), the default user's group, --process-default-user, which" + apiPod + "set runAsGroup, or start the agent with --process-allow-root"},

		// The host's groups.
		{name: "supplementalGroups [6] (disk)", pod: pod(groups(1500, 6), nil),
			err: "spec.securityContext.supplementalGroups[1]: 6 is the host's group disk, which" + apiPod + "allow it with --process-allowed-gids"},
		{name: "fsGroup 6", pod: pod(fsGroup(6), nil),
			err: "spec.securityContext.fsGroup: 6 is the host's group disk, which" + apiPod + "allow it with --process-allowed-gids"},
		{name: "runAsGroup of a host group", pod: pod(nil, group(1000)),
			err: "spec.containers[1].securityContext.runAsGroup: 1000 is the host's group alice, which" + apiPod + "allow it with --process-allowed-gids"},
		{name: "a system gid the host does not name", pod: pod(groups(500), nil),
			err: "spec.securityContext.supplementalGroups[0]: 500 is a system gid of the host (below 1000), which" + apiPod + "allow it with --process-allowed-gids"},
		{name: "--process-allowed-gids", cfg: Config{AllowedGIDs: []IDRange{{6, 6}, {500, 599}}}, pod: pod(&corev1.PodSecurityContext{SupplementalGroups: []int64{6, 500}, FSGroup: ptr.To[int64](599)}, nil)},
		{name: "--process-allow-root opens no other group", cfg: Config{AllowRoot: true}, pod: pod(groups(6), nil),
			err: "spec.securityContext.supplementalGroups[0]: 6 is the host's group disk"},
		{name: "root is given any group", cfg: Config{AllowRoot: true}, pod: pod(&corev1.PodSecurityContext{RunAsUser: ptr.To[int64](0), SupplementalGroups: []int64{6}}, nil)},
		{name: "a gid that follows the uid and names a host group", pod: pod(nil, user(1600)),
			err: "spec.containers[1].securityContext.runAsGroup: not set, so the container would run with group 1600 (its runAsUser's number, the host having no user 1600), the host's group docker, which" + apiPod + "set runAsGroup, or allow it with --process-allowed-gids"},

		// The host's users.
		{name: "runAsUser of a host account", pod: pod(nil, user(1)),
			err: "spec.containers[1].securityContext.runAsUser: 1 is the host's user daemon, which" + apiPod + "allow it with --process-allowed-uids"},
		{name: "pod runAsUser of a host account above 999", pod: pod(&corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000)}, nil),
			err: "spec.securityContext.runAsUser: 1000 is the host's user alice, which" + apiPod + "allow it with --process-allowed-uids"},
		{name: "a system uid the host does not name", pod: pod(nil, user(999)),
			err: "spec.containers[1].securityContext.runAsUser: 999 is a system uid of the host (below 1000), which" + apiPod + "allow it with --process-allowed-uids"},
		{name: "an id of no host account", pod: pod(&corev1.PodSecurityContext{SupplementalGroups: []int64{1500}, FSGroup: ptr.To[int64](1501)}, user(1500))},
		{name: "the account's primary group comes with its own check", cfg: Config{AllowedUIDs: []IDRange{{1000, 1999}}}, pod: pod(nil, user(1000)),
			err: "spec.containers[1].securityContext.runAsGroup: not set, so the container would run with group 1000 (uid 1000's primary group on the host), the host's group alice, which" + apiPod + "set runAsGroup, or allow it with --process-allowed-gids"},
		{name: "--process-allowed-uids and --process-allowed-gids", cfg: Config{AllowedUIDs: []IDRange{{1000, 1999}}, AllowedGIDs: []IDRange{{1000, 1000}}}, pod: pod(nil, user(1000))},
		{name: "allowed uids are not gids", cfg: Config{AllowedUIDs: []IDRange{{6, 6}}}, pod: pod(groups(6), nil),
			err: "spec.securityContext.supplementalGroups[0]: 6 is the host's group disk"},
		{name: "runAsNonRoot with a host account", pod: pod(&corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true)}, user(1)),
			err: "spec.containers[1].securityContext.runAsUser: 1 is the host's user daemon"},
		{name: "an unreadable /etc/passwd refuses", accounts: fakeAccounts{err: errors.New("open /etc/passwd: permission denied")}, pod: pod(nil, user(1500)),
			err: "spec.containers[1].securityContext.runAsUser: 1500 is an id the host's accounts could not be read for (open /etc/passwd: permission denied), which" + apiPod + "allow it with --process-allowed-uids"},

		// The default user's ids are the operator's choice.
		{name: "nobody named", pod: pod(&corev1.PodSecurityContext{RunAsUser: ptr.To[int64](65534), RunAsGroup: ptr.To[int64](65534), SupplementalGroups: []int64{65534}}, nil)},
		{name: "a default user of the host's with its groups", defaultUser: &lifecycle.User{UID: 1, GID: 1, SupplementalGroups: []int64{6}}, pod: pod(nil, nil)},
		{name: "the default user's ids named", defaultUser: &lifecycle.User{UID: 1, GID: 1, SupplementalGroups: []int64{6}}, pod: pod(groups(6, 1), user(1))},
		{name: "the default user with a group named", defaultUser: &lifecycle.User{UID: 1, GID: 1}, pod: pod(nil, group(1500))},
		{name: "the default user's group is not its uid", defaultUser: &lifecycle.User{UID: 1, GID: 1}, pod: pod(nil, user(1600)),
			err: "spec.containers[1].securityContext.runAsGroup: not set, so the container would run with group 1600"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.defaultUser == nil {
				tc.defaultUser = nobody
			}
			if tc.accounts == nil {
				tc.accounts = testAccounts
			}
			r := &Runtime{cfg: tc.cfg, root: true, defaultUser: tc.defaultUser, hostAccounts: tc.accounts}
			err := r.Admit(tc.pod)
			if tc.err == "" {
				assert.NoError(t, err)
			} else {
				assert.ErrorContains(t, err, tc.err)
			}
		})
	}

	t.Run("agent not root", func(t *testing.T) {
		// Every container keeps the agent's own ids whatever the pod names: no group is given.
		r := &Runtime{root: false, defaultUser: &lifecycle.User{UID: 1000, GID: 1000}, hostAccounts: testAccounts}
		assert.NoError(t, r.Admit(pod(&corev1.PodSecurityContext{RunAsGroup: ptr.To[int64](0), SupplementalGroups: []int64{6}}, nil)))
	})
}

// Static pods run as their manifest says, groups included; --process-restrict-static-pods
// holds them to the API pods' rules, and the refusal says so.
func TestAdmitIDsStaticPods(t *testing.T) {
	nobody := &lifecycle.User{UID: 65534, GID: 65534}
	static := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{podutil.ConfigSourceAnnotationKey: podutil.FileSource}},
		Spec: corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{RunAsGroup: ptr.To[int64](0), SupplementalGroups: []int64{6}, FSGroup: ptr.To[int64](0)},
			Containers:      []corev1.Container{{Name: "a", SecurityContext: &corev1.SecurityContext{RunAsUser: ptr.To[int64](1)}}},
		},
	}
	trusting := &Runtime{root: true, defaultUser: nobody, hostAccounts: testAccounts}
	assert.NoError(t, trusting.Admit(static))

	restricting := &Runtime{cfg: Config{RestrictStaticPods: true}, root: true, defaultUser: nobody, hostAccounts: testAccounts}
	assert.EqualError(t, restricting.Admit(static), "spec.containers[0].securityContext.runAsUser: 1 is the host's user daemon, which is not allowed for a static pod held to the API pods' rules by --process-restrict-static-pods: allow it with --process-allowed-uids")
	static.Spec.Containers[0].SecurityContext = nil
	assert.EqualError(t, restricting.Admit(static), "spec.securityContext.runAsGroup: 0 (root) is not allowed for a static pod held to the API pods' rules by --process-restrict-static-pods: start the agent with --process-allow-root")
	static.Spec.SecurityContext.RunAsGroup = nil
	assert.EqualError(t, restricting.Admit(static), "spec.securityContext.supplementalGroups[0]: 6 is the host's group disk, which is not allowed for a static pod held to the API pods' rules by --process-restrict-static-pods: allow it with --process-allowed-gids")
}

// The host's own files say which ids are its accounts: the machine's /etc/passwd and /etc/group,
// read as the agent reads them.
func TestAdmitIDsOfTheHost(t *testing.T) {
	r := &Runtime{root: true, defaultUser: &lifecycle.User{UID: 65534, GID: 65534}}
	pod := func(sc *corev1.PodSecurityContext) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{SecurityContext: sc, Containers: []corev1.Container{{Name: "a"}}}}
	}
	disk, err := user.LookupGroupId("6")
	if err != nil {
		t.Skipf("no group 6 on this machine: %v", err)
	}
	assert.EqualError(t, r.Admit(pod(&corev1.PodSecurityContext{SupplementalGroups: []int64{6}})),
		"spec.securityContext.supplementalGroups[0]: 6 is the host's group "+disk.Name+", which is not allowed for an API pod (static pods run as their manifest says): allow it with --process-allowed-gids")
	if daemon, err := user.LookupId("1"); err == nil {
		assert.ErrorContains(t, r.Admit(pod(&corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1)})),
			"spec.securityContext.runAsUser: 1 is the host's user "+daemon.Username+", which")
	}
	// An id far above any account the host is likely to have.
	const free = 1987654
	if _, err := user.LookupId(strconv.Itoa(free)); err == nil {
		t.Skipf("uid %d is an account of this machine", free)
	}
	if _, err := user.LookupGroupId(strconv.Itoa(free)); err == nil {
		t.Skipf("gid %d is a group of this machine", free)
	}
	assert.NoError(t, r.Admit(pod(&corev1.PodSecurityContext{RunAsUser: ptr.To[int64](free), SupplementalGroups: []int64{free}})))
}

func TestParseIDRanges(t *testing.T) {
	got, err := ParseIDRanges([]string{"1000-1999", " 5000", "", "6"})
	require.NoError(t, err)
	assert.Equal(t, []IDRange{{1000, 1999}, {5000, 5000}, {6, 6}}, got)
	for _, bad := range []string{"0", "0-999", "x", "10-", "-5", "2000-1000", "4294967295", "1-2-3"} {
		_, err := ParseIDRanges([]string{bad})
		assert.Error(t, err, bad)
	}
	_, err = ParseIDRanges([]string{"0-999"})
	assert.EqualError(t, err, `"0-999": 0 is root, which only --process-allow-root allows`)
}
