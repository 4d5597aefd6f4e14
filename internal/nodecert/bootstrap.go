package nodecert

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/vk-static/vk-static/backoff"
)

// Names in the certificate directory, as the kubelet's.
const (
	ClientPairName = "kubelet-client"
	ServerPairName = "kubelet-server"
	// tmpKeyFile is the key of a bootstrap request that has not been issued yet.
	tmpKeyFile = "kubelet-client.key.tmp"
)

// ErrDenied is returned when the cluster denied (or failed) the certificate signing request:
// retrying with the same request cannot succeed, an operator must look at it.
var ErrDenied = errors.New("certificate signing request denied")

// DefaultBootstrapBackoff is how Bootstrap retries an attempt that failed for a reason that
// may pass (a token not, or no longer, valid; an API server not reachable): after 2 s, doubling
// up to a minute, each delay up to a tenth longer at random.
func DefaultBootstrapBackoff() wait.Backoff {
	return *backoff.Policy{Initial: 2 * time.Second, Max: time.Minute}.WaitBackoff(0.1)
}

// issueTimeout bounds the wait for one request to be issued, as the kubelet's; the next
// attempt finds the same request (same key, same name) and waits again.
const issueTimeout = time.Hour

// BootstrapConfig is what Bootstrap needs. Every path field and NodeName are required.
type BootstrapConfig struct {
	// KubeconfigPath is the node's kubeconfig (--kubeconfig). If it holds a client certificate
	// that has not expired, Bootstrap does nothing; else it is written, pointing at the
	// certificate in CertDir.
	KubeconfigPath string
	// BootstrapKubeconfigPath holds the bootstrap credentials (--bootstrap-kubeconfig), used
	// only to request the first certificate.
	BootstrapKubeconfigPath string
	// CertDir is where the certificate and its key are kept (--cert-dir).
	CertDir  string
	NodeName string
	// Backoff between failed attempts; the zero value means DefaultBootstrapBackoff().
	Backoff wait.Backoff
	// Clock times the back-off; nil means the real clock.
	Clock clock.Clock

	// newClient is the client of the bootstrap credentials; nil means newCSRClient. Tests set
	// it to a fake.
	newClient func(*rest.Config) (CSRClient, error)
}

// Bootstrap is the kubelet's LoadClientCert: it makes sure KubeconfigPath names a usable client
// certificate for system:node:<NodeName>, requesting one with the bootstrap credentials if
// needed. It returns when the kubeconfig is usable, on ErrDenied, on a local error (a file that
// cannot be read or written), or when ctx ends; other failures are logged and retried.
func Bootstrap(ctx context.Context, c BootstrapConfig) error {
	logger := klog.FromContext(ctx)
	usable, why := kubeconfigUsable(c.KubeconfigPath)
	if usable {
		logger.Info("Kubeconfig holds a valid client certificate, no bootstrap needed", "kubeconfig", c.KubeconfigPath)
		return nil
	}
	logger.Info("Bootstrapping a client certificate", "kubeconfig", c.KubeconfigPath, "reason", why, "bootstrapKubeconfig", c.BootstrapKubeconfigPath)
	store, err := newStore(c.CertDir, ClientPairName, clock.RealClock{})
	if err != nil {
		return fmt.Errorf("--cert-dir %s: %w", c.CertDir, err)
	}
	// A certificate in the store that has not expired serves as it is (the kubeconfig was lost).
	if cert, err := store.Current(); err == nil && cert.Leaf != nil && time.Now().Before(cert.Leaf.NotAfter) {
		return writeKubeconfigFor(c.BootstrapKubeconfigPath, c.KubeconfigPath, store.CurrentPath())
	}
	if err := os.MkdirAll(c.CertDir, 0o700); err != nil {
		return fmt.Errorf("--cert-dir: %w", err)
	}
	keyPath := filepath.Join(c.CertDir, tmpKeyFile)
	keyPEM, _, err := keyutil.LoadOrGenerateKeyFile(keyPath)
	if err != nil {
		return fmt.Errorf("--cert-dir: private key: %w", err)
	}

	backoff, clk, newClient := c.Backoff, c.Clock, c.newClient
	if backoff.Duration == 0 {
		backoff = DefaultBootstrapBackoff()
	}
	if clk == nil {
		clk = clock.RealClock{}
	}
	if newClient == nil {
		newClient = newCSRClient
	}
	for {
		// Read again on every attempt: an operator may fix the token while the agent waits.
		bootstrap, err := loadConfig(c.BootstrapKubeconfigPath)
		if err != nil {
			return fmt.Errorf("--bootstrap-kubeconfig: %w", err)
		}
		client, err := newClient(bootstrap)
		if err != nil {
			return fmt.Errorf("--bootstrap-kubeconfig: %w", err)
		}
		certPEM, err := requestClientCertificate(ctx, client, keyPEM, c.NodeName, clk)
		if err == nil {
			if _, err := store.Update(certPEM, keyPEM); err != nil {
				return fmt.Errorf("--cert-dir: %w", err)
			}
			if err := os.Remove(keyPath); err != nil && !os.IsNotExist(err) {
				logger.Info("Could not remove the bootstrap request's key", "path", keyPath, "err", err)
			}
			logger.Info("Client certificate issued", "certificate", store.CurrentPath())
			return writeKubeconfigFor(c.BootstrapKubeconfigPath, c.KubeconfigPath, store.CurrentPath())
		}
		if errors.Is(err, ErrDenied) {
			// The same key would find the same denied request again: leave nothing behind.
			_ = os.Remove(keyPath)
			return err
		}
		if errors.Is(err, errOtherRequest) {
			// The request of this key's name is not one this key can use (its certificate
			// expired: issued to an agent that stopped before storing it; or someone else's
			// request took the name). The name comes from the key, so the same key would find
			// it again until an operator deleted it: a new key makes a new request.
			if rmErr := os.Remove(keyPath); rmErr != nil && !os.IsNotExist(rmErr) {
				return fmt.Errorf("--cert-dir: private key: %w", rmErr)
			}
			newKeyPEM, _, keyErr := keyutil.LoadOrGenerateKeyFile(keyPath)
			if keyErr != nil {
				return fmt.Errorf("--cert-dir: private key: %w", keyErr)
			}
			keyPEM = newKeyPEM
			logger.Info("The certificate signing request of the bootstrap key cannot be used: the next attempt requests with a new key", "err", err)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		wait := backoff.Step()
		logger.Error(err, "Bootstrapping the client certificate failed, retrying", "retryIn", wait.Round(time.Millisecond))
		t := clk.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C():
		}
	}
}

// requestClientCertificate creates (or finds) the CSR for key and waits for its certificate.
func requestClientCertificate(ctx context.Context, client CSRClient, keyPEM []byte, nodeName string, clk clock.Clock) ([]byte, error) {
	key, err := keyutil.ParsePrivateKeyPEM(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("private key: %w", err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, errors.New("private key cannot sign")
	}
	subject := nodeSubject(nodeName)
	csrPEM, err := certutil.MakeCSR(key, &subject, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("make certificate request: %w", err)
	}
	usages := clientUsages(key)
	name, err := requestName(signer.Public(), subject, usages)
	if err != nil {
		return nil, err
	}
	csr, err := create(ctx, client, request{
		name: name, csrPEM: csrPEM, key: signer, signer: certificatesv1.KubeAPIServerClientKubeletSignerName, usages: usages,
	})
	if err != nil {
		return nil, explainRequestError(err)
	}
	waitCtx, cancel := context.WithTimeout(ctx, issueTimeout)
	defer cancel()
	klog.FromContext(ctx).Info("Waiting for the client certificate to be issued", "csr", csr.Name)
	certPEM, err := waitForCertificate(waitCtx, client, csr, clk)
	if err != nil {
		return nil, explainRequestError(err)
	}
	return certPEM, nil
}

// clientUsages are the key usages of a kubelet client certificate (kube-apiserver-client-kubelet
// allows exactly these).
func clientUsages(key any) []certificatesv1.KeyUsage {
	return usagesFor(key, certificatesv1.UsageClientAuth)
}

// usagesFor are the key usages the kubelet signers allow for key: digital signature, key
// encipherment for an RSA key only, and auth (client or server).
func usagesFor(key any, auth certificatesv1.KeyUsage) []certificatesv1.KeyUsage {
	usages := []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature}
	if _, ok := key.(*rsa.PrivateKey); ok {
		usages = append(usages, certificatesv1.UsageKeyEncipherment)
	}
	return append(usages, auth)
}

// nodeSubject is the identity of node nodeName: user system:node:<nodeName> in system:nodes.
func nodeSubject(nodeName string) pkix.Name {
	return pkix.Name{CommonName: "system:node:" + nodeName, Organization: []string{"system:nodes"}}
}

// explainRequestError names the flag whose credentials the API server refused.
func explainRequestError(err error) error {
	if apierrors.IsUnauthorized(err) {
		return fmt.Errorf("the API server refused the credentials of --bootstrap-kubeconfig (a bootstrap token that is wrong, expired or deleted?): %w", err)
	}
	if apierrors.IsForbidden(err) {
		return fmt.Errorf("the credentials of --bootstrap-kubeconfig may not request a node certificate (is the token's group bound to system:node-bootstrapper?): %w", err)
	}
	return err
}
