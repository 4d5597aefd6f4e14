package nodecert

import (
	"crypto/sha512"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"

	"github.com/vk-static/vk-static/internal/atomicfile"
)

// loadConfig reads a kubeconfig file.
func loadConfig(path string) (*rest.Config, error) {
	return clientcmd.BuildConfigFromFlags("", path)
}

// kubeconfigUsable tells whether the kubeconfig at path holds a client certificate that has not
// expired, and if not, why.
func kubeconfigUsable(path string) (bool, string) {
	if _, err := os.Stat(path); err != nil {
		return false, err.Error()
	}
	cfg, err := loadConfig(path)
	if err != nil {
		return false, err.Error()
	}
	certPEM, _, err := configPair(cfg)
	if err != nil {
		return false, err.Error()
	}
	if len(certPEM) == 0 {
		return false, "no client certificate in it"
	}
	certs, err := certutil.ParseCertsPEM(certPEM)
	if err != nil {
		return false, err.Error()
	}
	for _, c := range certs {
		if time.Now().After(c.NotAfter) {
			return false, fmt.Sprintf("its client certificate expired at %s", c.NotAfter.UTC().Format(time.RFC3339))
		}
	}
	return true, ""
}

// writeKubeconfigFor writes the node's kubeconfig: the bootstrap kubeconfig's cluster, and the
// certificate and key at pemPath (which rotation keeps current), as the kubelet writes it.
func writeKubeconfigFor(bootstrapPath, kubeconfigPath, pemPath string) error {
	bootstrap, err := loadConfig(bootstrapPath)
	if err != nil {
		return fmt.Errorf("--bootstrap-kubeconfig: %w", err)
	}
	caFile, caData := bootstrap.CAFile, bootstrap.CAData
	if caFile != "" {
		caData = nil
	}
	kc := clientcmdapi.Config{
		Clusters: map[string]*clientcmdapi.Cluster{"default-cluster": {
			Server: bootstrap.Host, InsecureSkipTLSVerify: bootstrap.Insecure,
			CertificateAuthority: caFile, CertificateAuthorityData: caData, TLSServerName: bootstrap.ServerName,
		}},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"default-auth": {ClientCertificate: pemPath, ClientKey: pemPath}},
		Contexts:       map[string]*clientcmdapi.Context{"default-context": {Cluster: "default-cluster", AuthInfo: "default-auth", Namespace: "default"}},
		CurrentContext: "default-context",
	}
	data, err := clientcmd.Write(kc)
	if err != nil {
		return fmt.Errorf("--kubeconfig: %w", err)
	}
	// Atomically and durably: an agent stopped half-way, or restarted after a power loss, must
	// never find half a kubeconfig.
	if err := os.MkdirAll(filepath.Dir(kubeconfigPath), 0o755); err != nil {
		return fmt.Errorf("--kubeconfig: %w", err)
	}
	if err := atomicfile.WriteFile(kubeconfigPath, data, 0o600); err != nil {
		return fmt.Errorf("--kubeconfig: %w", err)
	}
	return nil
}

// requestName is the kubelet's digested CSR name: the same key, subject and usages give the
// same name, so an agent restarted while its request waits finds that request again.
func requestName(publicKey any, subject pkix.Name, usages []certificatesv1.KeyUsage) (string, error) {
	hash := sha512.New512_256()
	encode := base64.RawURLEncoding.EncodeToString
	write := func(data []byte) {
		hash.Write([]byte(encode(data)))
		hash.Write([]byte{'|'})
	}
	der, err := x509.MarshalPKIXPublicKey(publicKey)
	if err != nil {
		return "", err
	}
	write(der)
	write([]byte(subject.CommonName))
	for _, o := range subject.Organization {
		write([]byte(o))
	}
	for _, u := range usages {
		write([]byte(u))
	}
	return "node-csr-" + encode(hash.Sum(nil)), nil
}
