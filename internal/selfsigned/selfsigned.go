package selfsigned

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"time"
)

// CA is a certificate authority: its certificate and the key that signs.
type CA struct {
	Cert    *x509.Certificate
	Key     crypto.Signer
	CertPEM []byte // Cert, PEM-encoded
}

// NewCA creates a key and a self-signed CA certificate for it, named commonName and valid
// from notBefore to notAfter. It signs leaf certificates only (path length zero).
func NewCA(commonName string, notBefore, notAfter time.Time) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          SerialNumber(),
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             notBefore.UTC(),
		NotAfter:              notAfter.UTC(),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, Key: key, CertPEM: pemBlock("CERTIFICATE", der)}, nil
}

// Leaf describes a leaf certificate: a client's or a server's.
type Leaf struct {
	// Subject: a client certificate carries its user in CN and its groups in O, as the API
	// server's and the agent's x509 authenticators read them.
	Subject pkix.Name
	// Hosts are the IP addresses and DNS names a serving certificate is for.
	Hosts               []string
	Usage               x509.ExtKeyUsage
	NotBefore, NotAfter time.Time
}

// Issue signs a new key's certificate for l, its NotAfter cut to the CA's own: its
// certificate and key, PEM-encoded.
func (ca *CA) Issue(l Leaf) (certPEM, keyPEM []byte, err error) {
	if l.NotAfter.After(ca.Cert.NotAfter) {
		l.NotAfter = ca.Cert.NotAfter
	}
	return sign(l, ca.Cert, ca.Key)
}

// Cert is a self-signed leaf certificate for l (the certificate is its own issuer): its
// certificate and key, PEM-encoded. A client trusts it by pinning it; no CA is made.
func Cert(l Leaf) (certPEM, keyPEM []byte, err error) { return sign(l, nil, nil) }

// sign makes a key and signs its certificate for l with parent's key, or with its own when
// parent is nil.
func sign(l Leaf, parent *x509.Certificate, parentKey crypto.Signer) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          SerialNumber(),
		Subject:               l.Subject,
		NotBefore:             l.NotBefore.UTC(),
		NotAfter:              l.NotAfter.UTC(),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{l.Usage},
		BasicConstraintsValid: true, // and not a CA
	}
	for _, h := range l.Hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), parentKey)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pemBlock("CERTIFICATE", der), pemBlock("EC PRIVATE KEY", keyDER), nil
}

// SerialNumber is a random 128-bit serial, as RFC 5280 asks (unique per CA).
func SerialNumber() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil { // crypto/rand does not fail on Linux
		panic(err)
	}
	return n
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}
