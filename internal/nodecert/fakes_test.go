package nodecert

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// newFakeClientset is client-go's fake clientset, which also names objects created with a
// generateName (as the API server does and the fake does not).
func newFakeClientset(objects ...runtime.Object) *fake.Clientset {
	client := fake.NewClientset(objects...)
	var n atomic.Int32
	client.PrependReactor("create", "certificatesigningrequests", func(a k8stesting.Action) (bool, runtime.Object, error) {
		obj := a.(k8stesting.CreateAction).GetObject().(*certificatesv1.CertificateSigningRequest)
		if obj.Name == "" && obj.GenerateName != "" {
			obj.Name = fmt.Sprintf("%s%d", obj.GenerateName, n.Add(1))
		}
		return false, nil, nil // the default reactor stores it
	})
	return client
}

// testCA signs certificate requests as the cluster's signer would.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(1000 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return &testCA{cert: cert, key: key}
}

// sign issues the certificate of the request csrPEM, valid from notBefore to notAfter, as PEM.
func (ca *testCA) sign(t *testing.T, csrPEM []byte, notBefore, notAfter time.Time) []byte {
	t.Helper()
	req, err := parseRequest(csrPEM)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: req.Subject,
		DNSNames: req.DNSNames, IPAddresses: req.IPAddresses,
		NotBefore: notBefore, NotAfter: notAfter,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, req.PublicKey, ca.key)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// approve marks the request approved and, if certPEM is not nil, issued with it.
func approve(t *testing.T, client *fake.Clientset, name string, certPEM []byte) {
	t.Helper()
	csrs := client.CertificatesV1().CertificateSigningRequests()
	csr, err := csrs.Get(context.Background(), name, metav1.GetOptions{})
	require.NoError(t, err)
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "Test",
	})
	csr.Status.Certificate = certPEM
	_, err = csrs.UpdateStatus(context.Background(), csr, metav1.UpdateOptions{})
	require.NoError(t, err)
}

// deny marks the request denied.
func deny(t *testing.T, client *fake.Clientset, name string) {
	t.Helper()
	csrs := client.CertificatesV1().CertificateSigningRequests()
	csr, err := csrs.Get(context.Background(), name, metav1.GetOptions{})
	require.NoError(t, err)
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateDenied, Status: corev1.ConditionTrue, Reason: "Nope", Message: "not you",
	})
	_, err = csrs.UpdateStatus(context.Background(), csr, metav1.UpdateOptions{})
	require.NoError(t, err)
}

// count is how many actions of verb on certificatesigningrequests the client has seen.
func count(client *fake.Clientset, verb string) int {
	n := 0
	for _, a := range client.Actions() {
		if a.GetVerb() == verb && a.GetResource().Resource == "certificatesigningrequests" {
			n++
		}
	}
	return n
}
