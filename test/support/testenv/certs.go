package testenv

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"time"
)

// authority is the test cluster's single certificate authority: it signs the API server's
// serving certificate, the kubelet client certificate, and client certificates for identities
// that are not in the token file.
type authority struct {
	cert    *x509.Certificate
	key     crypto.Signer
	certPEM []byte
}

func newAuthority() (*authority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "vk-static-test-ca"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &authority{cert: cert, key: key, certPEM: pemBlock("CERTIFICATE", der)}, nil
}

// keyPair is a PEM-encoded certificate and its private key.
type keyPair struct {
	CertPEM, KeyPEM []byte
}

// issue signs a certificate for subject. Client certificates carry the identity in CN (user)
// and O (groups), as the API server's x509 authenticator reads them.
func (a *authority) issue(subject pkix.Name, hosts []string, usage x509.ExtKeyUsage) (keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return keyPair{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return keyPair{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      subject,
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, key.Public(), a.key)
	if err != nil {
		return keyPair{}, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return keyPair{}, err
	}
	return keyPair{CertPEM: pemBlock("CERTIFICATE", der), KeyPEM: pemBlock("EC PRIVATE KEY", keyDER)}, nil
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
