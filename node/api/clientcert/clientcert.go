package clientcert

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"

	asn1util "k8s.io/apimachinery/pkg/apis/asn1"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
)

// VerifyOptionsFunc returns the options to verify a certificate with (the client CA pool as
// last loaded from its file), false while there are none.
type VerifyOptionsFunc func() (x509.VerifyOptions, bool)

// UserFunc maps a verified chain, the client's certificate first, to a user; false when the
// chain names none this authenticator accepts.
type UserFunc func(chain []*x509.Certificate) (*authenticator.Response, bool, error)

// New authenticates requests whose client certificate verifies with verify's options, for
// client authentication whatever their key usages say, as the user toUser makes of the
// first chain it accepts. A request without a certificate is not authenticated, without an
// error; one whose certificate does not verify is an error.
func New(verify VerifyOptionsFunc, toUser UserFunc) authenticator.Request {
	return &certAuthenticator{verify: verify, toUser: toUser}
}

type certAuthenticator struct {
	verify VerifyOptionsFunc
	toUser UserFunc
}

func (a *certAuthenticator) AuthenticateRequest(req *http.Request) (*authenticator.Response, bool, error) {
	if req.TLS == nil || len(req.TLS.PeerCertificates) == 0 {
		return nil, false, nil
	}
	opts, ok := a.verify()
	if !ok {
		return nil, false, nil
	}
	// Unset key usages are server authentication to crypto/x509.
	opts.KeyUsages = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	certs := req.TLS.PeerCertificates
	if opts.Intermediates == nil && len(certs) > 1 {
		opts.Intermediates = x509.NewCertPool()
		for _, c := range certs[1:] {
			opts.Intermediates.AddCert(c)
		}
	}
	chains, err := certs[0].Verify(opts)
	if err != nil {
		return nil, false, fmt.Errorf("verifying certificate SN=%d, SKID=%X, AKID=%X failed: %w", certs[0].SerialNumber, certs[0].SubjectKeyId, certs[0].AuthorityKeyId, err)
	}
	var errs []error
	for _, chain := range chains {
		resp, ok, err := a.toUser(chain)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ok {
			return resp, true, nil
		}
	}
	return nil, false, errors.Join(errs...)
}

// CommonNameUser is the apiserver's CommonNameUserConversion: the user named by the
// certificate's common name (none without one), in its organizations as groups.
func CommonNameUser(chain []*x509.Certificate) (*authenticator.Response, bool, error) {
	cert := chain[0]
	if cert.Subject.CommonName == "" {
		return nil, false, nil
	}
	uid, err := subjectUID(cert)
	if err != nil {
		return nil, false, err
	}
	fingerprint := sha256.Sum256(cert.Raw)
	return &authenticator.Response{User: &user.DefaultInfo{
		Name:   cert.Subject.CommonName,
		UID:    uid,
		Groups: cert.Subject.Organization,
		Extra:  map[string][]string{user.CredentialIDKey: {"X509SHA256=" + hex.EncodeToString(fingerprint[:])}},
	}}, true, nil
}

var uidOID = asn1util.X509UID()

// subjectUID is the subject's one UID attribute, "" without any.
func subjectUID(cert *x509.Certificate) (string, error) {
	var uids []string
	for _, name := range cert.Subject.Names {
		if !name.Type.Equal(uidOID) {
			continue
		}
		uid, ok := name.Value.(string)
		if !ok {
			return "", errors.New("unable to parse UID into a string")
		}
		uids = append(uids, uid)
	}
	switch {
	case len(uids) == 0:
		return "", nil
	case len(uids) > 1:
		return "", fmt.Errorf("expected 1 UID, but found multiple: %v", uids)
	case uids[0] == "":
		return "", errors.New("UID cannot be an empty string")
	}
	return uids[0], nil
}
