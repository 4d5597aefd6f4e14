package testenv

import (
	"context"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// ControllerManagerOptions start kube-controller-manager beside the API server with the
// controllers a node joining the cluster needs: signing, approving and cleaning up certificate
// signing requests (signed by the test CA), cleaning up expired bootstrap tokens, and service
// accounts with their tokens, as in a real cluster.
type ControllerManagerOptions struct {
	// SigningDuration is the lifetime of the certificates it signs (--cluster-signing-duration);
	// 0 is the controller-manager's default (a year). The signer back-dates notBefore by five
	// minutes, so client-go's rotation at 70–90 % of the lifetime comes soon after issue when
	// this is a few minutes.
	SigningDuration time.Duration
	// Controllers replaces the list above (--controllers), e.g. {"*"} for every default
	// controller, as a real cluster runs them (make conformance: namespace deletion, node IPAM
	// and the rest).
	Controllers []string
	// ExtraArgs are appended to the command line, e.g. --allocate-node-cidrs.
	ExtraArgs []string
}

// KubeadmNodeBootstrapGroup is the group kubeadm's default node bootstrap tokens put their
// user in; kubeadm allows it to have node client certificates approved automatically.
const KubeadmNodeBootstrapGroup = "system:bootstrappers:kubeadm:default-node-token"

// controllerManagerArgs is kube-controller-manager's command line.
func (e *Env) controllerManagerArgs(o ControllerManagerOptions) ([]string, error) {
	kubeconfig := filepath.Join(e.Dir, "controller-manager.kubeconfig")
	if err := WriteKubeconfig(kubeconfig, e.AdminConfig); err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(e.ca.Key)
	if err != nil {
		return nil, err
	}
	caKey := filepath.Join(e.Dir, "ca.key")
	if err := os.WriteFile(caKey, pemBlock("PRIVATE KEY", keyDER), 0o600); err != nil {
		return nil, err
	}
	controllers := "csrsigning,csrapproving,csrcleaner,tokencleaner,serviceaccount-token,serviceaccount"
	if len(o.Controllers) > 0 {
		controllers = strings.Join(o.Controllers, ",")
	}
	args := []string{
		"--kubeconfig", kubeconfig,
		"--controllers", controllers,
		"--cluster-signing-cert-file", e.CAFile, "--cluster-signing-key-file", caKey,
		"--root-ca-file", e.CAFile,
		"--service-account-private-key-file", e.saKeyFile,
		"--use-service-account-credentials=false",
		"--leader-elect=false",
		"--bind-address", "127.0.0.1", "--secure-port", "0",
		"--v=1",
	}
	if o.SigningDuration > 0 {
		args = append(args, "--cluster-signing-duration", o.SigningDuration.String())
	}
	return append(args, o.ExtraArgs...), nil
}

// startControllerManager starts kube-controller-manager and sets up the bootstrap RBAC kubeadm
// does: bootstrap tokens may create node client CSRs, those of KubeadmNodeBootstrapGroup are
// approved automatically, and nodes' renewals of their own client certificates too.
func (e *Env) startControllerManager(ctx context.Context, o ControllerManagerOptions) error {
	args, err := e.controllerManagerArgs(o)
	if err != nil {
		return err
	}
	binary := filepath.Join(e.bin, "kube-controller-manager")
	if _, err := os.Stat(binary); err != nil {
		return fmt.Errorf("test control plane binary kube-controller-manager missing in %s: run `make testbin` (or set VK_STATIC_TESTBIN): %w", e.bin, err)
	}
	if e.controllerManager, err = startProcess("kube-controller-manager", filepath.Join(e.Dir, "kube-controller-manager.log"),
		binary, args...); err != nil {
		return err
	}
	bindings := []struct{ name, role, group string }{
		{"kubeadm:kubelet-bootstrap", "system:node-bootstrapper", "system:bootstrappers"},
		{"kubeadm:node-autoapprove-bootstrap", "system:certificates.k8s.io:certificatesigningrequests:nodeclient", KubeadmNodeBootstrapGroup},
		{"kubeadm:node-autoapprove-certificate-rotation", "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient", "system:nodes"},
	}
	for _, b := range bindings {
		crb := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: b.name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: b.role},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: b.group}},
		}
		if _, err := e.Admin.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("bootstrap RBAC %s: %w", b.name, err)
		}
	}
	return nil
}

// BootstrapTokenOptions describe a bootstrap token.
type BootstrapTokenOptions struct {
	// Groups the token's user is in besides system:bootstrappers; none means
	// KubeadmNodeBootstrapGroup (its node client CSRs are approved automatically).
	Groups []string
	// Expiration, if set, is when the API server stops accepting the token.
	Expiration time.Time
}

// BootstrapToken creates a bootstrap token Secret in kube-system, as `kubeadm token create`
// does, and returns the token ("<id>.<secret>"). It is deleted when the test ends.
func (e *Env) BootstrapToken(t testing.TB, o BootstrapTokenOptions) string {
	t.Helper()
	id, secret := randomToken()[:6], randomToken()[:16]
	groups := o.Groups
	if len(groups) == 0 {
		groups = []string{KubeadmNodeBootstrapGroup}
	}
	data := map[string]string{
		"token-id": id, "token-secret": secret,
		"usage-bootstrap-authentication": "true", "usage-bootstrap-signing": "true",
		"auth-extra-groups": strings.Join(groups, ","),
	}
	if !o.Expiration.IsZero() {
		data["expiration"] = o.Expiration.UTC().Format(time.RFC3339)
	}
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-" + id, Namespace: metav1.NamespaceSystem},
		Type:       corev1.SecretTypeBootstrapToken,
		StringData: data,
	}
	ctx := context.Background()
	if _, err := e.Admin.CoreV1().Secrets(metav1.NamespaceSystem).Create(ctx, s, metav1.CreateOptions{}); err != nil {
		t.Fatalf("bootstrap token: %v", err)
	}
	t.Cleanup(func() {
		_ = e.Admin.CoreV1().Secrets(metav1.NamespaceSystem).Delete(ctx, s.Name, metav1.DeleteOptions{})
	})
	return id + "." + secret
}

// BootstrapConfig is a client configuration authenticating with token, to write as a
// --bootstrap-kubeconfig (WriteKubeconfig).
func (e *Env) BootstrapConfig(token string) *rest.Config {
	return e.tokenConfig(token)
}
