package deploy

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/client-go/kubernetes/scheme"
)

// rbac.yaml decodes, strictly (no unknown or duplicate field), into rbacv1 objects: the
// binding of the API server's kubeadm kubelet-client user to system:kubelet-api-admin, and
// nothing else.
func TestRBAC(t *testing.T) {
	decoder := json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme.Scheme, scheme.Scheme,
		json.SerializerOptions{Yaml: true, Strict: true})
	var bindings []*rbacv1.ClusterRoleBinding
	for _, doc := range bytes.Split(RBAC(), []byte("\n---\n")) {
		obj, _, err := decoder.Decode(doc, nil, nil)
		require.NoError(t, err, "%s", doc)
		b, ok := obj.(*rbacv1.ClusterRoleBinding)
		require.True(t, ok, "a %T, want only ClusterRoleBindings", obj)
		bindings = append(bindings, b)
	}
	require.Len(t, bindings, 1)
	b := bindings[0]
	assert.Equal(t, "vk-static:kubelet-api-admin", b.Name)
	assert.Equal(t, rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:kubelet-api-admin"}, b.RoleRef)
	assert.Equal(t, []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "kube-apiserver-kubelet-client"}}, b.Subjects)
}

// The unit runs the installed agent with the settings docs/deploy.md describes; that the
// agent takes its command line is cmd/vk-static's test.
func TestSystemdUnit(t *testing.T) {
	settings, err := UnitSettings(SystemdUnit())
	require.NoError(t, err)
	for key, want := range map[string]string{
		"Service.KillMode":           "process", // containers outlive the agent
		"Service.Delegate":           "yes",     // and systemd leaves their supervisors alone
		"Service.Restart":            "always",
		"Install.WantedBy":           "multi-user.target",
		"Unit.StartLimitIntervalSec": "0",
	} {
		assert.Equal(t, []string{want}, settings[key], key)
	}
	args, err := ExecStart()
	require.NoError(t, err)
	assert.Equal(t, []string{"/usr/local/bin/vk-static",
		"--kubeconfig", "/etc/vk-static/node.kubeconfig",
		"--client-ca-file", "/etc/kubernetes/pki/ca.crt",
		"--pod-manifest-path", "/etc/kubernetes/manifests",
		"--root-dir", "/var/lib/vk-static",
	}, args)
}

func TestUnitSettings(t *testing.T) {
	got, err := UnitSettings([]byte("# c\n[Unit]\nA=1\n; c\n[Service]\nExecStart=/bin/x \\\n  --a b \\\n  --c\nB = 2\nB=3\n"))
	require.NoError(t, err)
	assert.Equal(t, map[string][]string{"Unit.A": {"1"}, "Service.ExecStart": {"/bin/x  --a b  --c"}, "Service.B": {"2", "3"}}, got)

	for _, bad := range []string{"A=1\n", "[S]\nnot a setting\n", "[S]\nA=1 \\\n"} {
		_, err := UnitSettings([]byte(bad))
		assert.Error(t, err, "%q", bad)
	}
}
