package nodecert

import (
	"crypto/tls"
	"crypto/x509"
	"slices"
	"time"
)

// renewalDeadline is when a certificate valid from notBefore to notAfter is renewed: at 70 %
// of its lifetime plus r (in [0, 1)) times another 20 %, as client-go's certificate manager
// (80 % ± 10 %). Early enough that a renewal that needs several attempts, or an operator's
// approval, still ends before expiry; spread so that nodes that joined together renew apart.
func renewalDeadline(notBefore, notAfter time.Time, r float64) time.Time {
	lifetime := notAfter.Sub(notBefore)
	return notBefore.Add(time.Duration(float64(lifetime) * (0.7 + 0.2*r)))
}

// satisfies tells whether cert has what template asks: its common name, and at least its
// organizations, DNS names and IP addresses (more is fine). A certificate that does not (the
// node got another address since) is renewed at once, as client-go's manager does.
func satisfies(cert *tls.Certificate, template *x509.CertificateRequest) bool {
	if cert == nil || cert.Leaf == nil {
		return false
	}
	leaf := cert.Leaf
	if template.Subject.CommonName != leaf.Subject.CommonName {
		return false
	}
	for _, o := range template.Subject.Organization {
		if !slices.Contains(leaf.Subject.Organization, o) {
			return false
		}
	}
	for _, n := range template.DNSNames {
		if !slices.Contains(leaf.DNSNames, n) {
			return false
		}
	}
	for _, ip := range template.IPAddresses {
		if !slices.ContainsFunc(leaf.IPAddresses, ip.Equal) {
			return false
		}
	}
	return true
}
