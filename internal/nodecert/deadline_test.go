package nodecert

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestRenewalDeadline: 70 % of the lifetime at the earliest, 90 % at the latest.
func TestRenewalDeadline(t *testing.T) {
	notBefore := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	notAfter := notBefore.Add(100 * time.Hour)
	for _, tc := range []struct {
		r    float64
		want time.Duration
	}{{0, 70 * time.Hour}, {0.5, 80 * time.Hour}, {0.999999, 90 * time.Hour}} {
		got := renewalDeadline(notBefore, notAfter, tc.r).Sub(notBefore)
		assert.InDelta(t, float64(tc.want), float64(got), float64(time.Second), "r=%v: %v", tc.r, got)
	}
}

// TestSatisfies: a certificate lacking a name, address or organization the template asks for
// is renewed at once; one with more is kept.
func TestSatisfies(t *testing.T) {
	leaf := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "system:node:a", Organization: []string{"system:nodes"}},
		DNSNames:    []string{"a", "a.example"},
		IPAddresses: []net.IP{net.ParseIP("10.0.0.1").To4()},
	}
	cert := &tls.Certificate{Leaf: leaf}
	tmpl := func(cn string, dns []string, ips ...string) *x509.CertificateRequest {
		r := &x509.CertificateRequest{Subject: pkix.Name{CommonName: cn, Organization: []string{"system:nodes"}}, DNSNames: dns}
		for _, ip := range ips {
			r.IPAddresses = append(r.IPAddresses, net.ParseIP(ip)) // 16-byte form: compared as an address
		}
		return r
	}
	assert.True(t, satisfies(cert, tmpl("system:node:a", []string{"a"}, "10.0.0.1")))
	assert.False(t, satisfies(cert, tmpl("system:node:b", nil)), "another name")
	assert.False(t, satisfies(cert, tmpl("system:node:a", []string{"b"})), "a DNS name more")
	assert.False(t, satisfies(cert, tmpl("system:node:a", nil, "10.0.0.2")), "an address more")
	other := tmpl("system:node:a", nil)
	other.Subject.Organization = append(other.Subject.Organization, "extra")
	assert.False(t, satisfies(cert, other), "an organization more")
	assert.False(t, satisfies(nil, tmpl("system:node:a", nil)), "no certificate")
}
