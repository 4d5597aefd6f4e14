package nodecert

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/connrotation"
	"k8s.io/klog/v2"
)

// rotationCheckPeriod is how often RotatingConfig looks for a new certificate, as the kubelet's
// transport does; old connections keep a certificate that is still valid until then.
const rotationCheckPeriod = 10 * time.Second

// CurrentCertificate is where RotatingConfig takes the client certificate from: a *Manager.
type CurrentCertificate interface {
	// Current is the pair to present, nil if there is none.
	Current() *tls.Certificate
}

// RotatingConfig returns a copy of cfg that authenticates with m's current certificate on every
// TLS handshake and, when m rotates it, closes every connection it made: clients re-dial with
// the new certificate, and watches resume from their resourceVersion. Every client made from
// the result shares one transport. The check stops when ctx ends.
func RotatingConfig(ctx context.Context, cfg *rest.Config, m CurrentCertificate) (*rest.Config, error) {
	return rotatingConfig(ctx, cfg, m, rotationCheckPeriod)
}

func rotatingConfig(ctx context.Context, cfg *rest.Config, m CurrentCertificate, period time.Duration) (*rest.Config, error) {
	if cfg.Transport != nil || cfg.Dial != nil {
		return nil, fmt.Errorf("rotating client certificate: the configuration already has a transport or dialer")
	}
	tlsConfig, err := rest.TLSConfigFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("rotating client certificate: %w", err)
	}
	if tlsConfig == nil {
		tlsConfig = &tls.Config{}
	}
	tlsConfig.Certificates = nil
	tlsConfig.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
		if cert := m.Current(); cert != nil {
			return cert, nil
		}
		return &tls.Certificate{}, nil // no certificate: the API server answers Unauthorized
	}
	dialer := connrotation.NewDialer((&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext)
	last := m.Current()
	go wait.UntilWithContext(ctx, func(ctx context.Context) {
		current := m.Current()
		if current == nil || current == last {
			return
		}
		last = current
		var notAfter time.Time
		if current.Leaf != nil {
			notAfter = current.Leaf.NotAfter
		}
		klog.FromContext(ctx).Info("Client certificate rotated, closing connections so that they use it", "notAfter", notAfter)
		dialer.CloseAll()
	}, period)

	out := rest.AnonymousClientConfig(cfg) // keeps host, CA-less TLS flags and rate limits; no credentials
	out.TLSClientConfig = rest.TLSClientConfig{}
	out.Transport = utilnet.SetTransportDefaults(&http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		TLSHandshakeTimeout: 10 * time.Second,
		TLSClientConfig:     tlsConfig,
		MaxIdleConnsPerHost: 25,
		DialContext:         dialer.DialContext,
	})
	return out, nil
}

// withPair is cfg authenticating with pair instead of its own credentials. The renewal
// authenticates with the pair the manager holds, not with the file at the store's current path:
// that file may no longer be the pair in memory (storing the bootstrap pair failed, which is
// only logged; an operator's or another program's clean-up removed or replaced it), and a
// renewal with it would fail, or go as another identity, while the pair in use is valid.
// rest.Config takes a pair as PEM only; each pair makes one entry in client-go's transport
// cache, one per renewal.
func withPair(cfg *rest.Config, pair *tls.Certificate) (*rest.Config, error) {
	if len(pair.Certificate) == 0 || pair.PrivateKey == nil {
		return nil, fmt.Errorf("current certificate: no certificate or no key")
	}
	var certPEM []byte
	for _, der := range pair.Certificate {
		certPEM = append(certPEM, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(pair.PrivateKey)
	if err != nil {
		return nil, fmt.Errorf("current certificate's key: %w", err)
	}
	out := rest.AnonymousClientConfig(cfg)
	out.CertData, out.KeyData = certPEM, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
	return out, nil
}
