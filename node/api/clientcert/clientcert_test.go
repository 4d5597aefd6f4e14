package clientcert_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/hex"
	"errors"
	"math/big"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/vk-static/vk-static/node/api/clientcert"
)

// now is the time the certificates are verified at, fixed so that no case depends on the clock.
var now = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

type keyPair struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

var serial int64

// issue makes a certificate from tmpl signed by parent (self-signed when nil).
func issue(t *testing.T, tmpl *x509.Certificate, parent *keyPair) *keyPair {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial++
	tmpl.SerialNumber = big.NewInt(serial)
	if tmpl.NotBefore.IsZero() {
		tmpl.NotBefore, tmpl.NotAfter = now.Add(-time.Hour), now.Add(time.Hour)
	}
	signer, signerCert := key, tmpl
	if parent != nil {
		signer, signerCert = parent.key, parent.cert
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signerCert, &key.PublicKey, signer)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &keyPair{cert: cert, key: key}
}

func ca(t *testing.T, name string, parent *keyPair) *keyPair {
	return issue(t, &x509.Certificate{Subject: pkix.Name{CommonName: name}, IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}, parent)
}

func leaf(t *testing.T, subject pkix.Name, parent *keyPair, usages ...x509.ExtKeyUsage) *keyPair {
	if usages == nil {
		usages = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	}
	return issue(t, &x509.Certificate{Subject: subject, ExtKeyUsage: usages, KeyUsage: x509.KeyUsageDigitalSignature}, parent)
}

func credentialID(c *x509.Certificate) map[string][]string {
	sum := sha256.Sum256(c.Raw)
	return map[string][]string{user.CredentialIDKey: {"X509SHA256=" + hex.EncodeToString(sum[:])}}
}

// uidOID is Kubernetes' UID attribute (1.3.6.1.4.1.57683.2), spelled out to test against.
var uidOID = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57683, 2}

func TestAuthenticate(t *testing.T) {
	root := ca(t, "client CA", nil)
	intermediate := ca(t, "intermediate", root)
	other := ca(t, "other CA", nil)
	roots := x509.NewCertPool()
	roots.AddCert(root.cert)

	valid := leaf(t, pkix.Name{CommonName: "alice", Organization: []string{"team-a", "team-b"}}, root)
	noGroups := leaf(t, pkix.Name{CommonName: "bob"}, root)
	viaIntermediate := leaf(t, pkix.Name{CommonName: "carol"}, intermediate)
	bothUsages := leaf(t, pkix.Name{CommonName: "dave"}, root, x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth)
	withUID := leaf(t, pkix.Name{CommonName: "erin", ExtraNames: []pkix.AttributeTypeAndValue{{Type: uidOID, Value: "erin-id"}}}, root)
	expired := issue(t, &x509.Certificate{Subject: pkix.Name{CommonName: "old"}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, NotBefore: now.Add(-48 * time.Hour), NotAfter: now.Add(-24 * time.Hour)}, root)
	notYetValid := issue(t, &x509.Certificate{Subject: pkix.Name{CommonName: "new"}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, NotBefore: now.Add(24 * time.Hour), NotAfter: now.Add(48 * time.Hour)}, root)

	for name, tc := range map[string]struct {
		certs   []*x509.Certificate // nil: a request without TLS
		noTLS   bool
		want    *user.DefaultInfo // nil: not authenticated
		wantErr string            // "": no error
	}{
		"no TLS":                         {noTLS: true},
		"TLS without a certificate":      {certs: []*x509.Certificate{}},
		"valid, organizations as groups": {certs: []*x509.Certificate{valid.cert}, want: &user.DefaultInfo{Name: "alice", Groups: []string{"team-a", "team-b"}, Extra: credentialID(valid.cert)}},
		"valid, no groups":               {certs: []*x509.Certificate{noGroups.cert}, want: &user.DefaultInfo{Name: "bob", Extra: credentialID(noGroups.cert)}},
		"valid through an intermediate":  {certs: []*x509.Certificate{viaIntermediate.cert, intermediate.cert}, want: &user.DefaultInfo{Name: "carol", Extra: credentialID(viaIntermediate.cert)}},
		"server and client auth":         {certs: []*x509.Certificate{bothUsages.cert}, want: &user.DefaultInfo{Name: "dave", Extra: credentialID(bothUsages.cert)}},
		"UID attribute":                  {certs: []*x509.Certificate{withUID.cert}, want: &user.DefaultInfo{Name: "erin", UID: "erin-id", Extra: credentialID(withUID.cert)}},
		"no common name":                 {certs: []*x509.Certificate{leaf(t, pkix.Name{Organization: []string{"team-a"}}, root).cert}},
		"intermediate not sent":          {certs: []*x509.Certificate{viaIntermediate.cert}, wantErr: "unknown authority"},
		"wrong CA":                       {certs: []*x509.Certificate{leaf(t, pkix.Name{CommonName: "mallory"}, other).cert}, wantErr: "unknown authority"},
		"self-signed":                    {certs: []*x509.Certificate{ca(t, "alice", nil).cert}, wantErr: "unknown authority"},
		"expired":                        {certs: []*x509.Certificate{expired.cert}, wantErr: "expired"},
		"not yet valid":                  {certs: []*x509.Certificate{notYetValid.cert}, wantErr: "not yet valid"},
		"server auth only":               {certs: []*x509.Certificate{leaf(t, pkix.Name{CommonName: "server"}, root, x509.ExtKeyUsageServerAuth).cert}, wantErr: "key usage"},
		"empty UID": {certs: []*x509.Certificate{leaf(t, pkix.Name{CommonName: "x", ExtraNames: []pkix.AttributeTypeAndValue{{Type: uidOID, Value: ""}}}, root).cert},
			wantErr: "UID cannot be an empty string"},
		"two UIDs": {certs: []*x509.Certificate{leaf(t, pkix.Name{CommonName: "x", ExtraNames: []pkix.AttributeTypeAndValue{{Type: uidOID, Value: "a"}, {Type: uidOID, Value: "b"}}}, root).cert},
			wantErr: "expected 1 UID"},
	} {
		t.Run(name, func(t *testing.T) {
			authn := clientcert.New(func() (x509.VerifyOptions, bool) {
				// No key usages, as a bare pool: New requires client authentication itself.
				return x509.VerifyOptions{Roots: roots, CurrentTime: now}, true
			}, clientcert.CommonNameUser)
			req := httptest.NewRequest("GET", "/pods", nil)
			req.TLS = &tls.ConnectionState{PeerCertificates: tc.certs}
			if tc.noTLS {
				req.TLS = nil
			}
			resp, ok, err := authn.AuthenticateRequest(req)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
			if ok != (tc.want != nil) {
				t.Fatalf("ok %v, want %v (response %+v)", ok, tc.want != nil, resp)
			}
			if tc.want == nil {
				return
			}
			got := resp.User.(*user.DefaultInfo)
			if got.Name != tc.want.Name || got.UID != tc.want.UID || strings.Join(got.Groups, ",") != strings.Join(tc.want.Groups, ",") ||
				strings.Join(got.Extra[user.CredentialIDKey], ",") != strings.Join(tc.want.Extra[user.CredentialIDKey], ",") {
				t.Errorf("user %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestAuthenticateWithoutVerifyOptions(t *testing.T) {
	root := ca(t, "client CA", nil)
	authn := clientcert.New(func() (x509.VerifyOptions, bool) { return x509.VerifyOptions{}, false }, clientcert.CommonNameUser)
	req := httptest.NewRequest("GET", "/pods", nil)
	req.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{leaf(t, pkix.Name{CommonName: "alice"}, root).cert}}
	if resp, ok, err := authn.AuthenticateRequest(req); ok || err != nil {
		t.Fatalf("no client CA loaded yet: got %+v, %v, %v, want not authenticated", resp, ok, err)
	}
}

// A UserFunc's error is returned when no chain gives a user; a chain it declines is no error.
func TestUserFunc(t *testing.T) {
	root := ca(t, "client CA", nil)
	roots := x509.NewCertPool()
	roots.AddCert(root.cert)
	req := httptest.NewRequest("GET", "/pods", nil)
	req.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{leaf(t, pkix.Name{CommonName: "alice"}, root).cert}}
	verify := func() (x509.VerifyOptions, bool) { return x509.VerifyOptions{Roots: roots, CurrentTime: now}, true }
	boom := errors.New("boom")
	for name, tc := range map[string]struct {
		toUser  clientcert.UserFunc
		wantOK  bool
		wantErr error
	}{
		"error":    {toUser: func([]*x509.Certificate) (*authenticator.Response, bool, error) { return nil, false, boom }, wantErr: boom},
		"declined": {toUser: func([]*x509.Certificate) (*authenticator.Response, bool, error) { return nil, false, nil }},
		"accepted": {toUser: func(chain []*x509.Certificate) (*authenticator.Response, bool, error) {
			return &authenticator.Response{User: &user.DefaultInfo{Name: "custom"}}, true, nil
		}, wantOK: true},
	} {
		t.Run(name, func(t *testing.T) {
			resp, ok, err := clientcert.New(verify, tc.toUser).AuthenticateRequest(req)
			if ok != tc.wantOK || !errors.Is(err, tc.wantErr) || (err == nil) != (tc.wantErr == nil) {
				t.Fatalf("got %+v, %v, %v; want ok %v, error %v", resp, ok, err, tc.wantOK, tc.wantErr)
			}
			if ok && resp.User.GetName() != "custom" {
				t.Errorf("user %q, want custom", resp.User.GetName())
			}
		})
	}
}
