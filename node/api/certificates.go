package api

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"sync/atomic"

	certutil "k8s.io/client-go/util/cert"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/vk-static/vk-static/node/api/clientcert"
)

// certificates are the serving pair and the client CA as the server uses them: re-read when
// their files change (as the kubelet's ReloadKubeletServerCertificateFile and
// ReloadKubeletClientCAFile have k8s.io/apiserver's dynamiccertificates do, whose controllers
// link client-go's events and informers, and so its whole clientset), and made into the
// tls.Config each handshake gets. Only watch's goroutine loads them; handshakes and the
// authenticator read what it stored.
type certificates struct {
	base     *tls.Config
	serving  keyPairFile
	clientCA *caBundleFile       // nil without a client CA file
	localCA  []*x509.Certificate // nil without a local administrator

	config       atomic.Pointer[tls.Config]
	clientCAOpts atomic.Pointer[x509.VerifyOptions] // the client CA file's, for the authenticator
}

// newCertificates loads the certificates for t, and fails when they do not load.
func (t tlsSettings) newCertificates(logger klog.Logger) (*certificates, error) {
	c := &certificates{
		base: &tls.Config{
			MinVersion:   t.minVersion,
			CipherSuites: t.cipherSuites,
			// HTTP/1.1 only: exec, attach and port-forward are upgrades, which HTTP/2 cannot
			// carry; the kubelet offers no h2 either.
			NextProtos: []string{"http/1.1"},
		},
		serving: keyPairFile{certFile: t.certFile, keyFile: t.keyFile},
	}
	if t.clientCAFile != "" {
		c.clientCA = &caBundleFile{file: t.clientCAFile}
	}
	if t.local != nil {
		var err error
		if c.localCA, err = certutil.ParseCertsPEM(t.local.ca.CABundle()); err != nil {
			return nil, fmt.Errorf("api: local admin CA: %w", err)
		}
	}
	if c.clientCA != nil || c.localCA != nil {
		// Ask for a certificate, never require one: bearer tokens are the other way in, and
		// the authenticator, not the handshake, verifies it against the CA.
		c.base.ClientAuth = tls.RequestClientCert
	}
	if err := c.load(logger, false); err != nil {
		return nil, fmt.Errorf("api: %w", err)
	}
	return c, nil
}

// watch re-loads the certificates whenever their files may have changed, until ctx ends. A
// load that fails keeps what was served and is logged; the next change, or the next periodic
// re-read, tries again.
func (c *certificates) watch(ctx context.Context, clk clock.WithTicker) {
	logger := klog.FromContext(ctx)
	files := []string{c.serving.certFile, c.serving.keyFile}
	if c.clientCA != nil {
		files = append(files, c.clientCA.file)
	}
	// A failure is logged once until it changes: a broken file is re-read every minute, and
	// every tool that writes the key before the certificate fails once on its way.
	var failing string
	watchFiles(ctx, clk, fileRecheckInterval, files, func() {
		err := c.load(logger, true)
		switch {
		case err == nil:
			failing = ""
		case err.Error() != failing:
			failing = err.Error()
			logger.Error(err, "Keeping the kubelet API's certificates as they were")
		}
	})
}

// load reads the serving pair and the client CA and, when either changed, stores the tls.Config
// and verify options made of them. One that fails to load leaves the other to change alone.
// reloaded says whether this is a re-read, which the log tells.
func (c *certificates) load(logger klog.Logger, reloaded bool) error {
	servingChanged, servingErr := c.serving.load()
	var caChanged bool
	var caErr error
	if c.clientCA != nil {
		caChanged, caErr = c.clientCA.load()
	}
	if err := errors.Join(servingErr, caErr); err != nil && c.config.Load() == nil {
		return err // nothing to serve yet
	}
	if reloaded && servingChanged {
		leaf := c.serving.pair.Leaf
		logger.Info("Reloaded the kubelet API's serving certificate", "certFile", c.serving.certFile,
			"subject", leaf.Subject.String(), "notAfter", leaf.NotAfter)
	}
	if reloaded && caChanged {
		logger.Info("Reloaded the kubelet API's client CA bundle", "file", c.clientCA.file, "certificates", len(c.clientCA.certs))
	}
	if caChanged {
		// No KeyUsages: the authenticator asks for client authentication itself.
		c.clientCAOpts.Store(&x509.VerifyOptions{Roots: certPool(c.clientCA.certs)})
	}
	if servingChanged || caChanged {
		cfg := c.base.Clone()
		cfg.Certificates = []tls.Certificate{*c.serving.pair}
		if c.base.ClientAuth != tls.NoClientCert {
			// Advertised in the handshake, the local administrator's CA beside the client CA,
			// so that clients choose a certificate either signed; each authenticator checks
			// against its own CA.
			var cas []*x509.Certificate
			if c.clientCA != nil {
				cas = append(cas, c.clientCA.certs...)
			}
			cfg.ClientCAs = certPool(append(cas, c.localCA...))
		}
		c.config.Store(cfg)
	}
	return errors.Join(servingErr, caErr)
}

// certPool is a pool of certs.
func certPool(certs []*x509.Certificate) *x509.CertPool {
	pool := x509.NewCertPool()
	for _, cert := range certs {
		pool.AddCert(cert)
	}
	return pool
}

// clientCAVerifyOptions are the options to verify a client certificate against the client CA
// file with, as it was last loaded; nil without a client CA file.
func (c *certificates) clientCAVerifyOptions() clientcert.VerifyOptionsFunc {
	if c.clientCA == nil {
		return nil
	}
	return func() (x509.VerifyOptions, bool) {
		opts := c.clientCAOpts.Load()
		if opts == nil {
			return x509.VerifyOptions{}, false
		}
		return *opts, true
	}
}

// serverConfig is the tls.Config of the http.Server: every handshake gets the current one,
// serving what served returns unless that is nil (or served is). The current one is shared by
// every handshake, as an http.Server's own is: crypto/tls does not change it.
func (c *certificates) serverConfig(served func() *tls.Certificate) *tls.Config {
	return &tls.Config{GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
		cfg := c.config.Load()
		if served == nil {
			return cfg, nil
		}
		cert := served()
		if cert == nil {
			return cfg, nil
		}
		cfg = cfg.Clone()
		cfg.Certificates = []tls.Certificate{*cert}
		return cfg, nil
	}}
}
