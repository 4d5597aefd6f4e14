package nodecert

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/utils/clock"
)

// NewServingManager is the kubelet's serving certificate manager (--rotate-server-certificates):
// it requests a certificate for system:node:<nodeName> with hosts (DNS names and IP
// addresses) as subject alternative names from signer kubernetes.io/kubelet-serving, keeps it in
// certDir as kubelet-server-current.pem and renews it. The cluster does not approve those
// requests by itself: until an operator does, Current returns nil. client must be the node's
// (its CertificateSigningRequests()).
func NewServingManager(ctx context.Context, client CSRClient, certDir, nodeName string, hosts []string) (*Manager, error) {
	store, err := newStore(certDir, ServerPairName, clock.RealClock{})
	if err != nil {
		return nil, fmt.Errorf("--cert-dir %s: %w", certDir, err)
	}
	template := &x509.CertificateRequest{Subject: nodeSubject(nodeName)}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			template.IPAddresses = append(template.IPAddresses, ip)
		} else if h != "" {
			template.DNSNames = append(template.DNSNames, h)
		}
	}
	return newManager(ctx, managerConfig{
		name:      ServerPairName,
		template:  template,
		signer:    certificatesv1.KubeletServingSignerName,
		usages:    func(key any) []certificatesv1.KeyUsage { return usagesFor(key, certificatesv1.UsageServerAuth) },
		store:     store,
		clientFor: func(*tls.Certificate) (CSRClient, error) { return client, nil },
	})
}
