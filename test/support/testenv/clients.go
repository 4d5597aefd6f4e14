package testenv

import (
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

func (e *Env) tokenConfig(token string) *rest.Config {
	return &rest.Config{
		Host:            e.Host,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: e.CAData},
		QPS:             -1, // tests are not throttled on the client side
	}
}

// NodeConfig returns a client configuration with the identity system:node:<name> in group
// system:nodes: the bearer token from the token file for a node named in Options.Nodes, a
// client certificate signed by the cluster CA for any other name (as a kubelet after TLS
// bootstrap would have).
func (e *Env) NodeConfig(name string) (*rest.Config, error) {
	if tok, ok := e.nodeTokens[name]; ok {
		return e.tokenConfig(tok), nil
	}
	kp, err := e.ca.issue(pkix.Name{CommonName: "system:node:" + name, Organization: []string{"system:nodes"}},
		nil, x509.ExtKeyUsageClientAuth)
	if err != nil {
		return nil, err
	}
	return &rest.Config{
		Host: e.Host,
		TLSClientConfig: rest.TLSClientConfig{
			CAData: e.CAData, CertData: kp.CertPEM, KeyData: kp.KeyPEM,
		},
		QPS: -1,
	}, nil
}

// NodeClient is NodeConfig as a clientset; it fails the test on error.
func (e *Env) NodeClient(t testing.TB, name string) kubernetes.Interface {
	t.Helper()
	cfg, err := e.NodeConfig(name)
	if err != nil {
		t.Fatalf("node config for %s: %v", name, err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("node client for %s: %v", name, err)
	}
	return cs
}

// WriteKubeconfig writes cfg as a kubeconfig file at path, for running the agent or kubectl
// as a separate process.
func WriteKubeconfig(path string, cfg *rest.Config) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["test"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["test"] = &clientcmdapi.AuthInfo{
		Token: cfg.BearerToken, ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData,
	}
	kc.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "test"}
	kc.CurrentContext = "test"
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return fmt.Errorf("write kubeconfig %s: %w", path, err)
	}
	return os.Chmod(path, 0o600)
}

// Namespace creates a namespace named after the test, with what a controller-manager (there is
// none here) would put in it — its default ServiceAccount and the kube-root-ca.crt ConfigMap —
// and deletes it when the test ends.
func (e *Env) Namespace(t testing.TB) string {
	t.Helper()
	ctx := context.Background()
	name := namespaceName(t.Name())
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: name + "-"}}
	created, err := e.Admin.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	if err := e.ensureDefaultServiceAccount(ctx, created.Name); err != nil {
		t.Fatalf("namespace %s: %v", created.Name, err)
	}
	if err := e.ensureRootCAConfigMap(ctx, created.Name); err != nil {
		t.Fatalf("namespace %s: %v", created.Name, err)
	}
	t.Cleanup(func() {
		_ = e.Admin.CoreV1().Namespaces().Delete(context.Background(), created.Name, metav1.DeleteOptions{})
	})
	return created.Name
}

func (e *Env) ensureDefaultServiceAccount(ctx context.Context, ns string) error {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	_, err := e.Admin.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create default service account: %w", err)
	}
	return nil
}

// rootCAConfigMap is the name and key the kube-controller-manager's root-ca-cert-publisher
// publishes the cluster CA under in every namespace; every API pod's kube-api-access-* volume
// projects it, so a pod waits for it (FailedMount) where it is missing.
const (
	rootCAConfigMap    = "kube-root-ca.crt"
	rootCAConfigMapKey = "ca.crt"
)

// ensureRootCAConfigMap publishes the cluster CA in namespace ns as the root-ca-cert-publisher
// does.
func (e *Env) ensureRootCAConfigMap(ctx context.Context, ns string) error {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name: rootCAConfigMap,
			Annotations: map[string]string{"kubernetes.io/description": "Contains a CA bundle that can be used to verify the kube-apiserver " +
				"when using internal endpoints such as the internal service IP or kubernetes.default.svc. " +
				"No other usage is guaranteed across distributions of Kubernetes clusters."},
		},
		Data: map[string]string{rootCAConfigMapKey: string(e.CAData)},
	}
	_, err := e.Admin.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("publish the cluster CA as config map %s: %w", rootCAConfigMap, err)
	}
	return nil
}

// namespaceName turns a test name into a DNS label prefix.
func namespaceName(testName string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(testName) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
		if b.Len() >= 40 {
			break
		}
	}
	s := strings.Trim(b.String(), "-")
	if s == "" {
		s = "test"
	}
	return s
}
