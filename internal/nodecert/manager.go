package nodecert

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/certificate"
	"k8s.io/klog/v2"
)

// NewClientManager is the kubelet's client certificate manager: it keeps the pair
// kubelet-client-current.pem in certDir for system:node:<nodeName> and, once started, renews it
// (a new key, a CSR made with the current certificate, auto-approved by the cluster for
// system:nodes) at 70–90 % of its lifetime. kubeconfig is the node's (as Bootstrap wrote it, or
// one an operator made): its certificate seeds an empty store. Stop it when done.
func NewClientManager(ctx context.Context, kubeconfig *rest.Config, certDir, nodeName string) (certificate.Manager, error) {
	store, err := certificate.NewFileStoreWithLogger(klog.FromContext(ctx), ClientPairName, certDir, certDir, "", "")
	if err != nil {
		return nil, fmt.Errorf("--cert-dir %s: %w", certDir, err)
	}
	certPEM, keyPEM, err := configPair(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("--kubeconfig: %w", err)
	}
	return certificate.NewManager(&certificate.Config{
		// The CSR goes with the certificate in use: the request comes from the node itself.
		ClientsetFn: func(current *tls.Certificate) (kubernetes.Interface, error) {
			if current == nil {
				return kubernetes.NewForConfig(kubeconfig)
			}
			return kubernetes.NewForConfig(withCertificate(kubeconfig, store.CurrentPath()))
		},
		Template:                &x509.CertificateRequest{Subject: nodeSubject(nodeName)},
		SignerName:              certificatesv1.KubeAPIServerClientKubeletSignerName,
		GetUsages:               clientUsages,
		CertificateStore:        store,
		BootstrapCertificatePEM: certPEM,
		BootstrapKeyPEM:         keyPEM,
		Name:                    "kubelet-client",
		Ctx:                     &ctx,
	})
}

// NewServingManager is the kubelet's serving certificate manager (--rotate-server-certificates):
// it requests a certificate for system:node:<nodeName> with hosts (DNS names and IP
// addresses) as subject alternative names from signer kubernetes.io/kubelet-serving, keeps it in
// certDir as kubelet-server-current.pem and renews it. The cluster does not approve those
// requests by itself: until an operator does, Current returns nil. client must be the node's.
func NewServingManager(ctx context.Context, client kubernetes.Interface, certDir, nodeName string, hosts []string) (certificate.Manager, error) {
	store, err := certificate.NewFileStoreWithLogger(klog.FromContext(ctx), ServerPairName, certDir, certDir, "", "")
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
	return certificate.NewManager(&certificate.Config{
		ClientsetFn:      func(*tls.Certificate) (kubernetes.Interface, error) { return client, nil },
		Template:         template,
		SignerName:       certificatesv1.KubeletServingSignerName,
		GetUsages:        func(key any) []certificatesv1.KeyUsage { return usagesFor(key, certificatesv1.UsageServerAuth) },
		CertificateStore: store,
		Name:             "kubelet-server",
		Ctx:              &ctx,
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
