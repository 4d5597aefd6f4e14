package api

import (
	"bytes"
	"crypto/x509"
	"fmt"
	"os"

	certutil "k8s.io/client-go/util/cert"
)

// caBundleFile is the client CA bundle, read from --client-ca-file. The kubelet re-reads it
// when it changes, so that a CA added to the file is trusted, and one removed is not, without
// a restart; load is that re-read.
type caBundleFile struct {
	file  string
	pem   []byte // of certs
	certs []*x509.Certificate
}

// load reads the file and reports whether it holds a bundle other than the last one loaded. A
// bundle that does not load — missing, empty, or with no certificate — is an error and keeps
// the last one, as k8s.io/apiserver's dynamiccertificates does.
func (c *caBundleFile) load() (changed bool, err error) {
	b, err := os.ReadFile(c.file)
	if err != nil {
		return false, err
	}
	if len(b) == 0 {
		return false, fmt.Errorf("not loading an empty client CA bundle from %s", c.file)
	}
	if c.certs != nil && bytes.Equal(b, c.pem) {
		return false, nil
	}
	certs, err := certutil.ParseCertsPEM(b)
	if err != nil {
		return false, fmt.Errorf("client CA bundle %s: %w", c.file, err)
	}
	c.pem, c.certs = b, certs
	return true, nil
}
