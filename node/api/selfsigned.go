package api

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"time"

	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"

	"github.com/vk-static/vk-static/internal/selfsigned"
)

// The kubelet's names for its self-signed pair in --cert-dir.
const (
	selfSignedCertName = "kubelet.crt"
	selfSignedKeyName  = "kubelet.key"
)

// selfSignedRenewBefore: a certificate this close to its end is replaced when the server is
// built. A running server keeps the one it started with, as the kubelet does; client-go issues
// them for a year.
const selfSignedRenewBefore = 30 * 24 * time.Hour

// ensureSelfSignedCert returns the self-signed serving certificate and key files in dir for
// hosts (hosts[0] is its subject): the pair already there when it is valid for every host for
// at least selfSignedRenewBefore, so that restarts keep the certificate clients may have
// pinned, else a new pair (selfSignedPair). why says which, for the log.
func ensureSelfSignedCert(dir string, hosts []string, now time.Time) (certFile, keyFile, why string, err error) {
	certFile, keyFile = filepath.Join(dir, selfSignedCertName), filepath.Join(dir, selfSignedKeyName)
	problem := reusable(certFile, keyFile, hosts, now)
	if problem == nil {
		return certFile, keyFile, "reused", nil
	}
	var ips []net.IP
	var names []string
	for _, h := range hosts[1:] {
		if ip := net.ParseIP(h); ip != nil {
			ips = append(ips, ip)
		} else {
			names = append(names, h)
		}
	}
	certPEM, keyPEM, err := selfSignedPair(hosts[0], ips, names, time.Now()) // now is for judging the old one
	if err != nil {
		return "", "", "", fmt.Errorf("generate a self-signed serving certificate: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", "", err
	}
	// The key first: a crash between the two writes leaves a pair that does not match, which
	// the next start replaces.
	if err := keyutil.WriteKey(keyFile, keyPEM); err != nil {
		return "", "", "", err
	}
	if err := certutil.WriteCert(certFile, certPEM); err != nil {
		return "", "", "", err
	}
	return certFile, keyFile, "created: " + problem.Error(), nil
}

// reusable is nil when certFile and keyFile are a pair valid at now and for selfSignedRenewBefore
// after, for every host; else what is wrong.
func reusable(certFile, keyFile string, hosts []string, now time.Time) error {
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errors.New("none yet")
	case err != nil:
		return err
	}
	leaf := pair.Leaf
	if leaf == nil { // GODEBUG=x509keypairleaf=0
		if leaf, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			return err
		}
	}
	if now.Before(leaf.NotBefore) || now.Add(selfSignedRenewBefore).After(leaf.NotAfter) {
		return fmt.Errorf("the old one is valid from %s to %s", leaf.NotBefore.Format(time.RFC3339), leaf.NotAfter.Format(time.RFC3339))
	}
	for _, h := range hosts {
		if err := leaf.VerifyHostname(h); err != nil {
			return fmt.Errorf("the old one is not for %s", h)
		}
	}
	return nil
}

// certificateHosts are the names a self-signed certificate is for: the node name first, then
// Hosts and a specific listen address, without repeats.
func certificateHosts(c Config) []string {
	hosts := []string{c.NodeName}
	seen := map[string]bool{c.NodeName: true}
	candidates := append([]string(nil), c.Hosts...)
	if ip := net.ParseIP(c.Address); ip != nil && !ip.IsUnspecified() {
		candidates = append(candidates, c.Address)
	}
	for _, h := range candidates {
		if h != "" && !seen[h] {
			seen[h] = true
			hosts = append(hosts, h)
		}
	}
	return hosts
}

// selfSignedValidity is how long a self-signed serving certificate lasts, as client-go's.
const selfSignedValidity = 365 * 24 * time.Hour

// selfSignedPair is a self-signed serving certificate for host (and ips and names) with an
// ECDSA P-256 key, PEM-encoded. The kubelet's (client-go's GenerateSelfSignedCertKey) has an RSA
// key and a one-off CA: every TLS handshake the API server makes for an exec or a log signs with
// this key, and RSA signatures were the largest part of the agent's CPU while it served exec
// round trips (docs/performance.md, api-latency); clients that trust the certificate itself
// (the API server does not verify it without --kubelet-certificate-authority; vk-static's CLI
// pins the file) need no CA.
func selfSignedPair(host string, ips []net.IP, names []string, now time.Time) (certPEM, keyPEM []byte, err error) {
	hosts := []string{host}
	for _, ip := range ips {
		hosts = append(hosts, ip.String())
	}
	return selfsigned.Cert(selfsigned.Leaf{
		Subject:   pkix.Name{CommonName: fmt.Sprintf("%s@%d", host, now.Unix())},
		Hosts:     append(hosts, names...),
		Usage:     x509.ExtKeyUsageServerAuth,
		NotBefore: now.Add(-time.Hour), // a clock a little behind still accepts it
		NotAfter:  now.Add(selfSignedValidity),
	})
}
