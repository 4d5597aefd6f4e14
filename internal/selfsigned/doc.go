// Package selfsigned makes certificates that need no one else's authority, all with ECDSA
// P-256 keys (cheap to sign with in TLS handshakes): a certificate authority of its own — a
// key and a self-signed CA certificate that signs only leaf certificates — and a self-signed
// leaf certificate for a server whose clients pin it.
//
// The agent's local administrator CA (node/api/localadmin) and its self-signed serving
// certificate (node/api) are made here, and so is the test control plane's CA
// (test/support/testenv): one generator, so that what the tests trust is made as production
// makes it.
//
//	ca, err := selfsigned.NewCA("my-ca", now.Add(-time.Minute), now.Add(10*365*24*time.Hour))
//	certPEM, keyPEM, err := ca.Issue(selfsigned.Leaf{Subject: pkix.Name{CommonName: "alice"},
//		Usage: x509.ExtKeyUsageClientAuth, NotBefore: now, NotAfter: now.Add(time.Hour)})
//	certPEM, keyPEM, err = selfsigned.Cert(selfsigned.Leaf{Subject: pkix.Name{CommonName: "node-a"},
//		Hosts: []string{"node-a", "10.0.0.1"}, Usage: x509.ExtKeyUsageServerAuth, ...})
package selfsigned
