package nodecert

import (
	"context"
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"reflect"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/klog/v2"
)

// request is one certificate signing request to send: the PEM request signed by key, for
// signer with usages.
type request struct {
	// name is the object's name; "" lets the API server generate one (csr-xxxxx). A request
	// that must be found again after a restart (the bootstrap's) has a name derived from its
	// key (requestName).
	name   string
	csrPEM []byte
	key    crypto.Signer
	signer string
	usages []certificatesv1.KeyUsage
}

// errOtherRequest is create's error when a request of the same name exists and is not the one
// asked for: its certificate expired, or another key or subject signed it. The same request
// would find it again forever; a caller with a named request makes a new key (a new name).
var errOtherRequest = errors.New("is another request")

// create creates the request, or, when one of the same name exists, takes that one if it is
// the same request (same subject and signer, signed by the same key, its certificate if any
// not expired): an agent restarted while its request waited for approval waits for that one
// instead of leaving it behind. Only certificates.k8s.io/v1 is asked (served since 1.19).
func create(ctx context.Context, client CSRClient, r request) (*certificatesv1.CertificateSigningRequest, error) {
	csr := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: r.name},
		Spec:       certificatesv1.CertificateSigningRequestSpec{Request: r.csrPEM, SignerName: r.signer, Usages: r.usages},
	}
	if r.name == "" {
		csr.GenerateName = "csr-"
	}
	created, err := client.Create(ctx, csr, metav1.CreateOptions{})
	if err == nil {
		klog.FromContext(ctx).V(2).Info("Certificate signing request created", "csr", created.Name)
		return created, nil
	}
	if !apierrors.IsAlreadyExists(err) || r.name == "" {
		return nil, fmt.Errorf("create certificate signing request: %w", err)
	}
	existing, err := client.Get(ctx, r.name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("certificate signing request %s exists but cannot be read: %w", r.name, err)
	}
	if err := sameRequest(existing, csr, r.key); err != nil {
		return nil, fmt.Errorf("certificate signing request %s exists and %w: %w", r.name, errOtherRequest, err)
	}
	klog.FromContext(ctx).Info("Certificate signing request exists already, waiting for it", "csr", r.name)
	return existing, nil
}

// sameRequest is nil if found is the request want (client-go's ensureCompatible).
func sameRequest(found, want *certificatesv1.CertificateSigningRequest, key crypto.Signer) error {
	foundCSR, err := parseRequest(found.Spec.Request)
	if err != nil {
		return err
	}
	wantCSR, err := parseRequest(want.Spec.Request)
	if err != nil {
		return err
	}
	if !reflect.DeepEqual(foundCSR.Subject, wantCSR.Subject) {
		return fmt.Errorf("subject %q, not %q", foundCSR.Subject, wantCSR.Subject)
	}
	if found.Spec.SignerName != "" && found.Spec.SignerName != want.Spec.SignerName {
		return fmt.Errorf("signer %q, not %q", found.Spec.SignerName, want.Spec.SignerName)
	}
	// Signed by our key: the certificate it gets is one we can use.
	foundCSR.PublicKey = key.Public()
	if err := foundCSR.CheckSignature(); err != nil {
		return fmt.Errorf("not signed by this key: %w", err)
	}
	if len(found.Status.Certificate) > 0 {
		certs, err := certutil.ParseCertsPEM(found.Status.Certificate)
		if err != nil {
			return fmt.Errorf("its certificate: %w", err)
		}
		for _, c := range certs {
			if time.Now().After(c.NotAfter) {
				return fmt.Errorf("its certificate expired at %s", c.NotAfter.UTC().Format(time.RFC3339))
			}
		}
	}
	return nil
}

// parseRequest decodes a PEM certificate request.
func parseRequest(data []byte) (*x509.CertificateRequest, error) {
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, errors.New("request: no PEM block CERTIFICATE REQUEST")
	}
	return x509.ParseCertificateRequest(block.Bytes)
}
