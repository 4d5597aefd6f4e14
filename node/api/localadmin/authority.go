package localadmin

import (
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/util/keyutil"

	"github.com/vk-static/vk-static/internal/atomicfile"
	"github.com/vk-static/vk-static/internal/selfsigned"
)

// The local administrator's identity: the user its certificate names, and the group that
// Authorizer allows (alongside system:authenticated, as every authenticated user has).
const (
	User  = "vk-static:local-admin"
	Group = "vk-static:local-admins"
)

// File names in the authority's directory.
const (
	CACertFile     = "local-admin-ca.crt"
	CAKeyFile      = "local-admin-ca.key"
	KubeconfigFile = "local-admin.kubeconfig"
)

// Lifetimes. The CA is replaced when it is this close to its end (RenewBefore), which also
// invalidates every kubeconfig it signed — the agent writes a new one each start. The client
// certificate lasts a year: an agent running longer than that needs a restart for its CLI.
const (
	caValidity         = 10 * 365 * 24 * time.Hour
	clientCertValidity = 365 * 24 * time.Hour
	RenewBefore        = 30 * 24 * time.Hour
)

// Authority is the local CA: it signs the local administrator's certificate and authenticates
// it.
type Authority struct {
	dir    string
	cert   *x509.Certificate
	key    crypto.Signer
	pem    []byte // cert, PEM
	roots  *x509.CertPool
	reused bool
}

// EnsureAuthority loads the local CA from dir when it is there and valid for at least
// RenewBefore after now, else creates one (and dir, 0700). dir is made 0700 in any case: it
// holds private keys only.
func EnsureAuthority(dir string, now time.Time) (*Authority, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("local admin CA: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("local admin CA: %w", err)
	}
	certFile, keyFile := filepath.Join(dir, CACertFile), filepath.Join(dir, CAKeyFile)
	a, err := loadAuthority(certFile, keyFile, now)
	if err == nil {
		a.dir, a.reused = dir, true
		return a, nil
	}
	if a, err = newAuthority(now); err != nil {
		return nil, fmt.Errorf("local admin CA: %w", err)
	}
	a.dir = dir
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(a.key)
	if err != nil {
		return nil, fmt.Errorf("local admin CA: %w", err)
	}
	// The key first: a crash between the two leaves a pair that does not match, which the next
	// start replaces. Both 0600: the certificate is no secret, but nobody else needs it.
	if err := writeFileAtomic(keyFile, keyPEM); err != nil {
		return nil, fmt.Errorf("local admin CA: %w", err)
	}
	if err := writeFileAtomic(certFile, a.pem); err != nil {
		return nil, fmt.Errorf("local admin CA: %w", err)
	}
	return a, nil
}

// Reused says whether EnsureAuthority found the CA (true) or created it.
func (a *Authority) Reused() bool { return a.reused }

// CABundle is the CA certificate, PEM: a TLS server advertises it so that clients choose the
// certificate it signed.
func (a *Authority) CABundle() []byte { return a.pem }

// loadAuthority reads a CA pair valid from now for RenewBefore at least.
func loadAuthority(certFile, keyFile string, now time.Time) (*Authority, error) {
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, err
	}
	if !cert.IsCA || now.Before(cert.NotBefore) || now.Add(RenewBefore).After(cert.NotAfter) {
		return nil, errors.New("not a CA valid long enough")
	}
	key, ok := pair.PrivateKey.(crypto.Signer)
	if !ok {
		return nil, errors.New("the key cannot sign")
	}
	pemBytes, err := os.ReadFile(certFile)
	if err != nil {
		return nil, err
	}
	return newAuthorityFrom(cert, key, pemBytes), nil
}

// newAuthority creates a CA key and its self-signed certificate.
func newAuthority(now time.Time) (*Authority, error) {
	ca, err := selfsigned.NewCA(fmt.Sprintf("vk-static-local-admin-ca@%d", now.Unix()),
		now.Add(-time.Minute), // a clock a little behind still accepts it
		now.Add(caValidity))
	if err != nil {
		return nil, err
	}
	return newAuthorityFrom(ca.Cert, ca.Key, ca.CertPEM), nil
}

func newAuthorityFrom(cert *x509.Certificate, key crypto.Signer, pemBytes []byte) *Authority {
	roots := x509.NewCertPool()
	roots.AddCert(cert)
	return &Authority{cert: cert, key: key, pem: pemBytes, roots: roots}
}

// issue signs a new client certificate for User in Group, valid from now: its certificate and
// key, PEM.
func (a *Authority) issue(now time.Time) (certPEM, keyPEM []byte, err error) {
	ca := selfsigned.CA{Cert: a.cert, Key: a.key}
	return ca.Issue(selfsigned.Leaf{
		Subject:   pkix.Name{CommonName: User, Organization: []string{Group}},
		Usage:     x509.ExtKeyUsageClientAuth,
		NotBefore: now.Add(-time.Minute),
		NotAfter:  now.Add(clientCertValidity), // or the CA's end, if sooner
	})
}

// writeFileAtomic writes data to path, 0600, so that a reader — the agent after a crash or a
// power loss — sees the old content or the new, never an empty or partial file (atomicfile:
// synced temporary file, rename, synced directory).
func writeFileAtomic(path string, data []byte) error {
	return atomicfile.WriteFile(path, data, 0o600)
}

// isNotExist reports whether err says a file is missing.
func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
