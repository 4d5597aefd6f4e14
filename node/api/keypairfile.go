package api

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
)

// keyPairFile is a serving certificate (with its intermediates) and its key, read from their
// files: --tls-cert-file and --tls-private-key-file, or the self-signed pair. The kubelet
// re-reads them when they change, so that a certificate renewed on disk is served without a
// restart; load is that re-read.
type keyPairFile struct {
	certFile, keyFile string
	certPEM, keyPEM   []byte // of pair
	pair              *tls.Certificate
}

// load reads both files and reports whether they hold a pair other than the last one loaded.
// A pair that does not load — a file missing, empty or half written, a key not the
// certificate's — is an error and keeps the last one, as k8s.io/apiserver's dynamiccertificates
// does: a tool that writes the key and then the certificate makes a bad pair between the two.
func (k *keyPairFile) load() (changed bool, err error) {
	certPEM, err := os.ReadFile(k.certFile)
	if err != nil {
		return false, err
	}
	keyPEM, err := os.ReadFile(k.keyFile)
	if err != nil {
		return false, err
	}
	if len(certPEM) == 0 || len(keyPEM) == 0 {
		return false, fmt.Errorf("not loading an empty serving certificate or key from %s and %s", k.certFile, k.keyFile)
	}
	if k.pair != nil && bytes.Equal(certPEM, k.certPEM) && bytes.Equal(keyPEM, k.keyPEM) {
		return false, nil
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return false, fmt.Errorf("serving certificate %s and key %s: %w", k.certFile, k.keyFile, err)
	}
	if pair.Leaf == nil { // GODEBUG=x509keypairleaf=0; the log wants its names and dates
		if pair.Leaf, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			return false, fmt.Errorf("serving certificate %s: %w", k.certFile, err)
		}
	}
	k.certPEM, k.keyPEM, k.pair = certPEM, keyPEM, &pair
	return true, nil
}
