package nodecert

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	mathrand "math/rand/v2"
	"sync"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/vk-static/vk-static/backoff"
)

// rotationTimeout bounds the wait for one renewal request to be issued, as client-go's
// certificate manager's; the next attempt sends a new request.
const rotationTimeout = 15 * time.Minute

// rotationRetry is how a failed renewal is retried: after 2 s, doubling up to 32 s, where it
// stays, each delay up to a tenth longer — client-go's certificate manager's numbers (five
// attempts 2 s apart doubling, then every 32 s).
var rotationRetry = backoff.Policy{Initial: 2 * time.Second, Max: 32 * time.Second}

// Manager keeps one certificate of the node current, as the kubelet's certificate managers
// (client-go's util/certificate): it serves the current pair from its store and, while Run
// runs, requests a new key's certificate at a random point of 70–90 % of the current one's
// lifetime (so that nodes that joined together do not all renew together), at once if there
// is none, or it came from bootstrap credentials, or it lacks a name or address now wanted.
type Manager struct {
	name       string // in logs: kubelet-client, kubelet-server
	template   *x509.CertificateRequest
	signer     string
	usages     func(key any) []certificatesv1.KeyUsage
	store      *store
	clientFor  func(current *tls.Certificate) (CSRClient, error)
	clock      clock.Clock
	randFloat  func() float64 // [0, 1): where in 70–90 % the renewal falls
	waitIssued time.Duration

	mu   sync.RWMutex
	cert *tls.Certificate
	// renewNow is set when the current pair must be replaced at the first chance (it is the
	// bootstrap pair, or there is none); only Run's goroutine reads and clears it.
	renewNow bool
	// issuedShort is the pair last issued without all the template asks (a signer that leaves
	// out an address or an organization). It is renewed at its deadline like any other: asked
	// for again at once, the signer would answer the same, and every answer would bring the
	// next request — a new key and CSR a round trip apart. Only Run's goroutine uses it.
	issuedShort *tls.Certificate
}

// managerConfig is what newManager needs.
type managerConfig struct {
	name     string
	template *x509.CertificateRequest
	signer   string
	usages   func(key any) []certificatesv1.KeyUsage
	store    *store
	// clientFor is the client to send the request with, given the current pair (nil if none):
	// called for every request, so that it may authenticate with the newest certificate.
	clientFor func(current *tls.Certificate) (CSRClient, error)
	// bootstrapCertPEM and bootstrapKeyPEM are used, and renewed at once, when the store has
	// no pair that has not expired.
	bootstrapCertPEM, bootstrapKeyPEM []byte
	clock                             clock.Clock
}

func newManager(ctx context.Context, c managerConfig) (*Manager, error) {
	m := &Manager{
		name: c.name, template: c.template, signer: c.signer, usages: c.usages, store: c.store,
		clientFor: c.clientFor, clock: c.clock, randFloat: mathrand.Float64, waitIssued: rotationTimeout,
	}
	if m.clock == nil {
		m.clock = clock.RealClock{}
	}
	cert, err := c.store.Current()
	switch {
	case err == nil && m.clock.Now().Before(cert.Leaf.NotAfter):
		m.cert = cert
		return m, nil
	case err != nil && !errors.Is(err, errNoPair):
		return nil, err
	}
	m.renewNow = true
	if len(c.bootstrapCertPEM) == 0 || len(c.bootstrapKeyPEM) == 0 {
		return m, nil
	}
	if m.cert, err = pairWithLeaf(tls.X509KeyPair(c.bootstrapCertPEM, c.bootstrapKeyPEM)); err != nil {
		return nil, fmt.Errorf("bootstrap certificate: %w", err)
	}
	// The bootstrap pair goes into the store too, so that the kubeconfig pointing at the
	// current path works until the first renewal (client-go's manager does the same).
	if _, err := c.store.Update(c.bootstrapCertPEM, c.bootstrapKeyPEM); err != nil {
		klog.FromContext(ctx).Error(err, "Could not store the bootstrap certificate", "certificate", m.name)
	}
	return m, nil
}

// pairWithLeaf is cert with its leaf parsed.
func pairWithLeaf(cert tls.Certificate, err error) (*tls.Certificate, error) {
	if err != nil {
		return nil, err
	}
	if cert.Leaf == nil {
		if cert.Leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
			return nil, err
		}
	}
	return &cert, nil
}

// Current is the current pair, or nil if there is none or it has expired.
func (m *Manager) Current() *tls.Certificate {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.cert == nil || m.cert.Leaf == nil || m.clock.Now().After(m.cert.Leaf.NotAfter) {
		return nil
	}
	return m.cert
}

// Run renews the certificate until ctx ends; it returns nil then, when nothing is left
// running.
func (m *Manager) Run(ctx context.Context) error {
	ctx = klog.NewContext(ctx, klog.LoggerWithName(klog.FromContext(ctx), m.name))
	logger := klog.FromContext(ctx)
	for ctx.Err() == nil {
		deadline := m.nextRenewal()
		if wait := deadline.Sub(m.clock.Now()); wait > 0 {
			logger.V(2).Info("Waiting for the next certificate renewal", "deadline", deadline, "wait", wait)
			// Then renew, without drawing another deadline: a new draw could fall later.
			pause(ctx, m.clock, wait)
		}
		delays := rotationRetry.WaitBackoff(0.1)
		for ctx.Err() == nil {
			err := m.renew(ctx)
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				break
			}
			wait := delays.Step()
			logger.Error(err, "Renewing the certificate failed, retrying", "retryIn", wait.Round(time.Millisecond))
			pause(ctx, m.clock, wait)
		}
	}
	return nil
}

// nextRenewal is when the current pair is renewed.
func (m *Manager) nextRenewal() time.Time {
	if m.renewNow {
		return m.clock.Now()
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if !satisfies(m.cert, m.template) && m.cert != m.issuedShort {
		return m.clock.Now()
	}
	return renewalDeadline(m.cert.Leaf.NotBefore, m.cert.Leaf.NotAfter, m.randFloat())
}

// renew requests a certificate for a new key, waits for it and makes it current.
func (m *Manager) renew(ctx context.Context) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("new key: %w", err)
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return fmt.Errorf("new key: %w", err)
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: keyutil.ECPrivateKeyBlockType, Bytes: der})
	csrPEM, err := certutil.MakeCSRFromTemplate(key, m.template)
	if err != nil {
		return fmt.Errorf("certificate request: %w", err)
	}
	client, err := m.clientFor(m.Current())
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	csr, err := create(ctx, client, request{csrPEM: csrPEM, key: key, signer: m.signer, usages: m.usages(key)})
	if err != nil {
		return err
	}
	waitCtx, cancel := context.WithTimeout(ctx, m.waitIssued)
	defer cancel()
	klog.FromContext(ctx).Info("Waiting for the renewed certificate to be issued", "csr", csr.Name)
	certPEM, err := waitForCertificate(waitCtx, client, csr, m.clock)
	if err != nil {
		return err
	}
	cert, err := m.store.Update(certPEM, keyPEM)
	if err != nil {
		return fmt.Errorf("store the new certificate: %w", err)
	}
	m.mu.Lock()
	m.cert, m.renewNow = cert, false
	m.mu.Unlock()
	klog.FromContext(ctx).Info("Certificate renewed", "csr", csr.Name, "notAfter", cert.Leaf.NotAfter)
	if !satisfies(cert, m.template) {
		m.issuedShort = cert
		klog.FromContext(ctx).Info("Warning: the issued certificate lacks names or addresses the request asked for; it is used until its renewal deadline",
			"csr", csr.Name, "dnsNames", cert.Leaf.DNSNames, "ipAddresses", cert.Leaf.IPAddresses, "organization", cert.Leaf.Subject.Organization)
	}
	return nil
}
