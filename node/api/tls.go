package api

import (
	"context"
	"crypto/tls"
	"fmt"
	"sync"
	"time"

	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	certutil "k8s.io/client-go/util/cert"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/klog/v2"
)

// tlsSettings is what New decided about TLS: the serving pair's files (given, or self-signed),
// the client CA file, and the protocol limits.
type tlsSettings struct {
	certFile, keyFile string
	selfSigned        string // "" for given files, else why the self-signed pair was reused or created
	clientCAFile      string
	minVersion        uint16
	cipherSuites      []uint16
	cipherNames       []string
	local             *localAdmin // nil without Config.LocalAdmin
}

// prepareTLS loads (or creates) everything Run will serve with, so that a missing file or a bad
// certificate fails New rather than Run.
func prepareTLS(c Config) (tlsSettings, error) {
	t := tlsSettings{certFile: c.TLSCertFile, keyFile: c.TLSPrivateKeyFile, clientCAFile: c.ClientCAFile, cipherNames: c.TLSCipherSuites}
	t.minVersion, _ = cliflag.TLSVersion(c.TLSMinVersion)          // checked by complete
	t.cipherSuites, _ = cliflag.TLSCipherSuites(c.TLSCipherSuites) // checked by complete
	if t.certFile == "" {
		var err error
		if t.certFile, t.keyFile, t.selfSigned, err = ensureSelfSignedCert(c.CertDirectory, certificateHosts(c), time.Now()); err != nil {
			return t, fmt.Errorf("api: %w", err)
		}
	} else if _, err := tls.LoadX509KeyPair(t.certFile, t.keyFile); err != nil {
		return t, fmt.Errorf("api: serving certificate: %w", err)
	}
	if t.clientCAFile != "" {
		if _, err := certutil.NewPool(t.clientCAFile); err != nil {
			return t, fmt.Errorf("api: client CA: %w", err)
		}
	}
	var err error
	if t.local, err = prepareLocalAdmin(c); err != nil {
		return t, fmt.Errorf("api: %w", err)
	}
	return t, nil
}

// certificates are the serving pair and client CA as k8s.io/apiserver's dynamiccertificates
// keep them: re-read when their files change (as the kubelet's ReloadKubeletServerCertificateFile
// and ReloadKubeletClientCAFile do), and fed to one controller that hands each TLS handshake the
// current tls.Config.
type certificates struct {
	clientCA   *dynamiccertificates.DynamicFileCAContent // nil without a client CA file
	serving    *dynamiccertificates.DynamicCertKeyPairContent
	controller *dynamiccertificates.DynamicServingCertificateController
}

// startCertificates makes the certificates and keeps them current until ctx ends; wg is done
// when their controllers have returned (the controllers' own workers end moments later:
// k8s.io/apiserver does not wait for them). Each is started as soon as it is made, because
// making one starts its work queue, which only its Run shuts down; so on an error too the
// caller cancels ctx and waits. It returns once the first tls.Config is ready.
func (t tlsSettings) startCertificates(ctx context.Context, wg *sync.WaitGroup) (*certificates, error) {
	c := &certificates{}
	var err error
	if c.serving, err = dynamiccertificates.NewDynamicServingContentFromFiles("serving-cert", t.certFile, t.keyFile); err != nil {
		return nil, fmt.Errorf("api: serving certificate: %w", err)
	}
	wg.Go(func() { c.serving.Run(ctx, 1) })
	base := &tls.Config{
		MinVersion:   t.minVersion,
		CipherSuites: t.cipherSuites,
		// HTTP/1.1 only: exec, attach and port-forward are upgrades, which HTTP/2 cannot carry;
		// the kubelet, whose config comes from the same controller, offers no h2 either.
		NextProtos: []string{"http/1.1"},
	}
	var clientCA dynamiccertificates.CAContentProvider // an untyped nil when there is none
	if t.clientCAFile != "" {
		if c.clientCA, err = dynamiccertificates.NewDynamicCAContentFromFile("client-ca-bundle", t.clientCAFile); err != nil {
			return nil, fmt.Errorf("api: client CA: %w", err)
		}
		wg.Go(func() { c.clientCA.Run(ctx, 1) })
		clientCA = c.clientCA
	}
	if t.local != nil {
		// Advertised beside the client CA, so that clients choose the local administrator's
		// certificate; the local administrator's authenticator checks it against this CA alone.
		localCA, err := dynamiccertificates.NewStaticCAContent("local-admin-ca", t.local.ca.CABundle())
		if err != nil {
			return nil, fmt.Errorf("api: local admin CA: %w", err)
		}
		if clientCA == nil {
			clientCA = localCA
		} else {
			clientCA = dynamiccertificates.NewUnionCAContentProvider(c.clientCA, localCA)
		}
	}
	if clientCA != nil {
		// Ask for a certificate, never require one: bearer tokens are the other way in, and
		// the authenticator, not the handshake, verifies it against the CA.
		base.ClientAuth = tls.RequestClientCert
	}
	c.controller = dynamiccertificates.NewDynamicServingCertificateController(base, clientCA, c.serving, nil, nil)
	c.serving.AddListener(c.controller)
	if c.clientCA != nil {
		c.clientCA.AddListener(c.controller)
	}
	// Before Run, whose worker calls the same unsynchronised code.
	err = c.controller.RunOnce()
	wg.Go(func() { c.controller.Run(1, ctx.Done()) })
	if err != nil {
		return nil, fmt.Errorf("api: TLS configuration: %w", err)
	}
	return c, nil
}

// clientCAProvider is the client CA for the authenticator: an untyped nil when there is none.
func (c *certificates) clientCAProvider() dynamiccertificates.CAContentProvider {
	if c.clientCA == nil {
		return nil
	}
	return c.clientCA
}

// serverConfig is the tls.Config of the http.Server: every handshake gets the current one,
// serving what served returns unless that is nil (or served is).
func (c *certificates) serverConfig(served func() *tls.Certificate) *tls.Config {
	if served == nil {
		return &tls.Config{GetConfigForClient: c.controller.GetConfigForClient}
	}
	return &tls.Config{GetConfigForClient: func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
		cfg, err := c.controller.GetConfigForClient(hello)
		cert := served()
		if err != nil || cfg == nil || cert == nil {
			return cfg, err
		}
		cfg = cfg.Clone()
		cfg.Certificates, cfg.GetCertificate = []tls.Certificate{*cert}, nil
		return cfg, nil
	}}
}

// log says what the server will serve with, and warns as the kubelet does.
func (t tlsSettings) log(logger klog.Logger) {
	if t.selfSigned != "" {
		logger.Info("Serving the kubelet API with a self-signed certificate", "certFile", t.certFile, "certificate", t.selfSigned)
	}
	insecure := cliflag.InsecureTLSCiphers()
	for _, name := range t.cipherNames {
		if _, ok := insecure[name]; ok {
			logger.Info("Use of insecure cipher detected", "cipher", name)
		}
	}
	if t.minVersion == tls.VersionTLS13 && len(t.cipherSuites) > 0 {
		logger.Info("TLS 1.3 cipher suites are not configurable, ignoring the cipher suites")
	}
}
