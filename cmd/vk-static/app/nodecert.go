package app

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/vk-static/vk-static/internal/nodecert"
)

// addCertificateFlags registers the node credential flags of the kubelet's TLS bootstrapping.
func (o *options) addCertificateFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.BootstrapKubeconfig, "bootstrap-kubeconfig", o.BootstrapKubeconfig, "Kubeconfig with bootstrap credentials (a bootstrap token), used only when --kubeconfig is missing or its client certificate has expired: the agent requests a certificate for system:node:<node name> (signer kubernetes.io/kube-apiserver-client-kubelet), keeps it in --cert-dir and writes --kubeconfig pointing at it. Needs --kubeconfig.")
	fs.StringVar(&o.CertDir, "cert-dir", o.CertDir, "Directory of the node's certificates: kubelet-client-current.pem and, with --rotate-server-certificates, kubelet-server-current.pem (default <root-dir>/pki).")
	fs.BoolVar(&o.RotateCertificates, "rotate-certificates", o.RotateCertificates, "Renew the client certificate in --cert-dir before it expires, through a certificate signing request made with the current one.")
	fs.BoolVar(&o.RotateServerCertificates, "rotate-server-certificates", o.RotateServerCertificates, "Request the kubelet API's serving certificate from the cluster (signer kubernetes.io/kubelet-serving, for the node's name and addresses) and renew it; until an operator approves the request, the API serves --tls-cert-file or its self-signed certificate. Needs --kubeconfig.")
}

func (o *options) validateCertificates(bad func(flag, format string, args ...any)) {
	if o.BootstrapKubeconfig != "" && o.Kubeconfig == "" {
		bad("bootstrap-kubeconfig", "needs --kubeconfig: the path where the node's kubeconfig is written")
	}
	if o.RotateServerCertificates && o.Kubeconfig == "" {
		bad("rotate-server-certificates", "needs --kubeconfig: the certificate is requested from the API server")
	}
}

// certDir is --cert-dir, defaulted.
func (o *options) certDir() string {
	if o.CertDir != "" {
		return o.CertDir
	}
	return filepath.Join(o.RootDir, "pki")
}

// nodeCredentials is the client configuration of the node: --kubeconfig, first bootstrapped
// with --bootstrap-kubeconfig if it is unusable, and, with --rotate-certificates, taking its
// certificate from a rotating manager (returned, for the caller to run; nil without).
func nodeCredentials(ctx context.Context, o *options, nodeName string) (*rest.Config, *nodecert.Manager, error) {
	if o.BootstrapKubeconfig != "" {
		err := nodecert.Bootstrap(ctx, nodecert.BootstrapConfig{
			KubeconfigPath: o.Kubeconfig, BootstrapKubeconfigPath: o.BootstrapKubeconfig,
			CertDir: o.certDir(), NodeName: nodeName,
		})
		if err != nil {
			return nil, nil, fmt.Errorf("--bootstrap-kubeconfig: %w", err)
		}
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", o.Kubeconfig)
	if err != nil {
		return nil, nil, fmt.Errorf("--kubeconfig: %w", err)
	}
	if !o.RotateCertificates || (len(cfg.CertData) == 0 && cfg.CertFile == "") {
		return cfg, nil, nil // nothing to rotate: a token, or rotation off
	}
	m, err := nodecert.NewClientManager(ctx, cfg, o.certDir(), nodeName)
	if err != nil {
		return nil, nil, err
	}
	rotating, err := nodecert.RotatingConfig(ctx, cfg, m)
	if err != nil {
		return nil, nil, err
	}
	return rotating, m, nil
}

// managerComponent runs a certificate manager (its Run) for the agent's lifetime.
type managerComponent struct{ *nodecert.Manager }

// servingHosts are the names and addresses the serving certificate is requested for: the
// node's name and the addresses its Node reports, as the kubelet's.
func servingHosts(nodeName string, n *corev1.Node) []string {
	hosts := []string{nodeName}
	for _, a := range n.Status.Addresses {
		if a.Address != "" && !slices.Contains(hosts, a.Address) {
			hosts = append(hosts, a.Address)
		}
	}
	return hosts
}
