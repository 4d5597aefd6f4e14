package localadmin

import (
	"fmt"
	"path/filepath"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// contextName names the cluster, user and context of the kubeconfig.
const contextName = "vk-static-local"

// WriteKubeconfig issues a client certificate valid from now and writes the kubeconfig the
// local administrator uses (KubeconfigFile in the authority's directory, 0600, replaced
// atomically): server is the kubelet API's URL, serverCertFile the serving certificate
// file the client verifies the agent by (read by the client at each connection, so a renewed
// one is trusted as soon as it is served), serverName the name in that certificate to expect
// when the certificate itself is not pinned (kubectl --kubeconfig verifies by it). It returns
// the file's path.
func (a *Authority) WriteKubeconfig(server, serverCertFile, serverName string, now time.Time) (string, error) {
	certPEM, keyPEM, err := a.issue(now)
	if err != nil {
		return "", fmt.Errorf("local admin certificate: %w", err)
	}
	serverCertFile, err = filepath.Abs(serverCertFile)
	if err != nil {
		return "", err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[contextName] = &clientcmdapi.Cluster{Server: server, CertificateAuthority: serverCertFile, TLSServerName: serverName}
	cfg.AuthInfos[contextName] = &clientcmdapi.AuthInfo{ClientCertificateData: certPEM, ClientKeyData: keyPEM}
	cfg.Contexts[contextName] = &clientcmdapi.Context{Cluster: contextName, AuthInfo: contextName}
	cfg.CurrentContext = contextName
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return "", err
	}
	path := filepath.Join(a.dir, KubeconfigFile)
	if err := writeFileAtomic(path, data); err != nil {
		return "", fmt.Errorf("local admin kubeconfig: %w", err)
	}
	return path, nil
}
