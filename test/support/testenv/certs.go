package testenv

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"os"
	"time"

	"github.com/vk-static/vk-static/internal/selfsigned"
)

// authority is the test cluster's single certificate authority: it signs the API server's
// serving certificate, the kubelet client certificate, and client certificates for identities
// that are not in the token file. It is made as the agent makes its own (internal/selfsigned).
type authority struct{ *selfsigned.CA }

// validity is how long the test CA and its certificates last, from an hour ago.
const validity = 24 * time.Hour

func newAuthority() (*authority, error) {
	ca, err := selfsigned.NewCA("vk-static-test-ca", time.Now().Add(-time.Hour), time.Now().Add(validity))
	if err != nil {
		return nil, err
	}
	return &authority{ca}, nil
}

// keyPair is a PEM-encoded certificate and its private key.
type keyPair struct {
	CertPEM, KeyPEM []byte
}

// issue signs a certificate for subject. Client certificates carry the identity in CN (user)
// and O (groups), as the API server's x509 authenticator reads them.
func (a *authority) issue(subject pkix.Name, hosts []string, usage x509.ExtKeyUsage) (keyPair, error) {
	certPEM, keyPEM, err := a.Issue(selfsigned.Leaf{
		Subject: subject, Hosts: hosts, Usage: usage,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(validity),
	})
	return keyPair{CertPEM: certPEM, KeyPEM: keyPEM}, err
}

// IssueServingCert returns a serving certificate for hosts signed by the test CA, e.g. for an
// agent's HTTP API that the API server verifies.
func (e *Env) IssueServingCert(hosts ...string) (certPEM, keyPEM []byte, err error) {
	kp, err := e.ca.issue(pkix.Name{CommonName: hosts[0]}, hosts, x509.ExtKeyUsageServerAuth)
	return kp.CertPEM, kp.KeyPEM, err
}

// IssueClientCert returns a client certificate for user in groups signed by the test CA (CAFile),
// e.g. to authenticate to an agent's HTTP API that trusts that CA (--client-ca-file).
func (e *Env) IssueClientCert(user string, groups ...string) (certPEM, keyPEM []byte, err error) {
	kp, err := e.ca.issue(pkix.Name{CommonName: user, Organization: groups}, nil, x509.ExtKeyUsageClientAuth)
	return kp.CertPEM, kp.KeyPEM, err
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

// writeKeyPair writes kp to dir/name.crt and dir/name.key and returns both paths.
func writeKeyPair(dir, name string, kp keyPair) (certFile, keyFile string, err error) {
	certFile, keyFile = dir+"/"+name+".crt", dir+"/"+name+".key"
	if err := os.WriteFile(certFile, kp.CertPEM, 0o600); err != nil {
		return "", "", err
	}
	if err := os.WriteFile(keyFile, kp.KeyPEM, 0o600); err != nil {
		return "", "", fmt.Errorf("write %s: %w", keyFile, err)
	}
	return certFile, keyFile, nil
}
