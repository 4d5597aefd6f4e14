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
//
// hosts are read once, here, where client-go's serving manager re-reads its template at every
// renewal (and checks it every second): the kubelet re-discovers its node's addresses while it
// runs. This agent's are known at start — the node name and --node-ip or the address it
// defaults to (cmd/vk-static/app's servingHosts, from the Node built before the agent runs) —
// and what could change them later, a NodeProvider reporting other addresses in its node status,
// reaches only the node controller's copy of the Node; the kubelet API's self-signed
// certificate keeps its start-time addresses for the same reason. Re-reading a list that cannot
// change would do nothing. A new address takes a restart, and then the stored certificate, which
// lacks it, is renewed at once (satisfies). Following addresses while running needs the agent
// to hand out the Node's current addresses first; then hosts becomes a function read in renew.
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
