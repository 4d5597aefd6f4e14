package nodecert

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
)

// NewClientManager is the kubelet's client certificate manager: it keeps the pair
// kubelet-client-current.pem in certDir for system:node:<nodeName> and, while it runs, renews
// it (a new key, a CSR made with the current certificate, auto-approved by the cluster for
// system:nodes) at 70–90 % of its lifetime. kubeconfig is the node's (as Bootstrap wrote it, or
// one an operator made): its certificate seeds an empty store.
func NewClientManager(ctx context.Context, kubeconfig *rest.Config, certDir, nodeName string) (*Manager, error) {
	store, err := newStore(certDir, ClientPairName, clock.RealClock{})
	if err != nil {
		return nil, fmt.Errorf("--cert-dir %s: %w", certDir, err)
	}
	certPEM, keyPEM, err := configPair(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("--kubeconfig: %w", err)
	}
	return newManager(ctx, managerConfig{
		name:     ClientPairName,
		template: &x509.CertificateRequest{Subject: nodeSubject(nodeName)},
		signer:   certificatesv1.KubeAPIServerClientKubeletSignerName,
		usages:   clientUsages,
		store:    store,
		// The CSR goes with the certificate in use: the request comes from the node itself,
		// which the cluster auto-approves for a renewal; with none (expired), with the
		// kubeconfig's own credentials.
		clientFor: func(current *tls.Certificate) (CSRClient, error) {
			if current == nil {
				return newCSRClient(kubeconfig)
			}
			cfg, err := withPair(kubeconfig, current)
			if err != nil {
				return nil, err
			}
			return newCSRClient(cfg)
		},
		bootstrapCertPEM: certPEM,
		bootstrapKeyPEM:  keyPEM,
	})
}

// configPair is the client certificate and key cfg authenticates with, as PEM (nil if none).
func configPair(cfg *rest.Config) (certPEM, keyPEM []byte, err error) {
	certPEM, keyPEM = cfg.CertData, cfg.KeyData
	if len(certPEM) == 0 && cfg.CertFile != "" {
		if certPEM, err = os.ReadFile(cfg.CertFile); err != nil {
			return nil, nil, err
		}
	}
	if len(keyPEM) == 0 && cfg.KeyFile != "" {
		if keyPEM, err = os.ReadFile(cfg.KeyFile); err != nil {
			return nil, nil, err
		}
	}
	return certPEM, keyPEM, nil
}
