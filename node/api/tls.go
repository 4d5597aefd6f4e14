package api

import (
	"crypto/tls"
	"fmt"
	"time"

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
