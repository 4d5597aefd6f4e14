package localadmin

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	certutil "k8s.io/client-go/util/cert"
)

// ErrNoCredential is returned by ReadCredential when there is no kubeconfig: the agent never
// served its API with this directory (or not yet).
var ErrNoCredential = errors.New("no local admin credential")

// Credential is the local administrator's kubeconfig as a client uses it.
type Credential struct {
	// Path is the kubeconfig file.
	Path string
	// Server is the kubelet API's URL, such as https://127.0.0.1:10250.
	Server string
	// ServerCertFile is the agent's serving certificate file: the agent is trusted when it
	// serves a certificate in that file, or one that chains to a certificate there and is
	// for ServerName.
	ServerCertFile string
	ServerName     string

	clientCert tls.Certificate
}

// ReadCredential reads the kubeconfig an Authority wrote in dir. A missing file is
// ErrNoCredential (wrapped, with the path); one that cannot be read (a user other than the
// agent's) says so.
func ReadCredential(dir string) (*Credential, error) {
	path := filepath.Join(dir, KubeconfigFile)
	data, err := os.ReadFile(path)
	switch {
	case isNotExist(err):
		return nil, fmt.Errorf("%w: %s does not exist", ErrNoCredential, path)
	case err != nil:
		return nil, err // names the path, and says "permission denied"
	}
	cfg, err := clientcmd.Load(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	ctx, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok {
		return nil, fmt.Errorf("%s: no current context", path)
	}
	cluster, user := cfg.Clusters[ctx.Cluster], cfg.AuthInfos[ctx.AuthInfo]
	if cluster == nil || user == nil {
		return nil, fmt.Errorf("%s: the current context's cluster or user is missing", path)
	}
	pair, err := tls.X509KeyPair(user.ClientCertificateData, user.ClientKeyData)
	if err != nil {
		return nil, fmt.Errorf("%s: client certificate: %w", path, err)
	}
	return &Credential{Path: path, Server: cluster.Server, ServerCertFile: cluster.CertificateAuthority, ServerName: cluster.TLSServerName, clientCert: pair}, nil
}

// TLSConfig is a client configuration that presents the local administrator's certificate and
// trusts the agent by ServerCertFile (see Credential), whatever address it is reached at: the
// agent serves what that file holds, and only root can write there.
func (c *Credential) TLSConfig() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		// Always present the certificate: a server that asks for client certificates but names
		// other CAs (the cluster's) still authenticates this one.
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &c.clientCert, nil },
		// Go's own verification would check the address against the certificate's names, and
		// the agent may be reached at an address its certificate does not name (127.0.0.1 for
		// a node whose certificate names its external address): VerifyConnection checks instead.
		InsecureSkipVerify: true, //nolint:gosec // verified by VerifyConnection
		VerifyConnection:   c.verifyServer,
	}
}

// verifyServer accepts the server when its certificate is one in ServerCertFile (pinned), or
// chains to one there and is for ServerName.
func (c *Credential) verifyServer(cs tls.ConnectionState) error {
	if len(cs.PeerCertificates) == 0 {
		return errors.New("the agent presented no certificate")
	}
	trusted, err := certutil.CertsFromFile(c.ServerCertFile)
	if err != nil {
		return fmt.Errorf("the agent's serving certificate file: %w", err)
	}
	leaf := cs.PeerCertificates[0]
	for _, t := range trusted {
		if bytes.Equal(t.Raw, leaf.Raw) {
			return nil
		}
	}
	roots, intermediates := x509.NewCertPool(), x509.NewCertPool()
	for _, t := range trusted {
		roots.AddCert(t)
	}
	for _, ic := range cs.PeerCertificates[1:] {
		intermediates.AddCert(ic)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: intermediates, DNSName: c.ServerName}); err != nil {
		return fmt.Errorf("the agent's certificate is not the one in %s: %w", c.ServerCertFile, err)
	}
	return nil
}
