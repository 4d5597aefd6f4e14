package api

import (
	"net"
	"net/url"
	"time"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	authnunion "k8s.io/apiserver/pkg/authentication/request/union"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	authzunion "k8s.io/apiserver/pkg/authorization/union"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/node/api/clientcert"
	"github.com/vk-static/vk-static/node/api/localadmin"
)

// localAdmin is the server's local administrator (Config.LocalAdmin): its CA, kept in
// CertDirectory. A nil *localAdmin is none, and its methods leave the server as configured.
type localAdmin struct{ ca *localadmin.Authority }

// prepareLocalAdmin loads or creates the local administrator's CA, so that New fails when it
// cannot; nil without Config.LocalAdmin.
func prepareLocalAdmin(c Config) (*localAdmin, error) {
	if !c.LocalAdmin {
		return nil, nil
	}
	ca, err := localadmin.EnsureAuthority(c.CertDirectory, time.Now())
	if err != nil {
		return nil, err
	}
	return &localAdmin{ca: ca}, nil
}

// authenticator is the kubelet's authenticator (newAuthenticator) with, first, the local
// administrator's certificate when there is a local CA; the local administrator alone when
// nothing else is configured.
func (s *Server) authenticator(clientCA clientcert.VerifyOptionsFunc) (authenticator.Request, error) {
	l, c := s.tls.local, s.cfg
	if l == nil {
		return newAuthenticator(c, clientCA)
	}
	if clientCA == nil && !c.Anonymous && !c.tokenWebhook() {
		return l.ca.Authenticator(), nil
	}
	next, err := newAuthenticator(c, clientCA)
	if err != nil {
		return nil, err
	}
	return authnunion.New(l.ca.Authenticator(), next), nil
}

// authorizer allows the local administrator before asking next.
func (l *localAdmin) authorizer(next authorizer.Authorizer) authorizer.Authorizer {
	if l == nil {
		return next
	}
	return authzunion.New(localadmin.Authorizer(), next)
}

// writeLocalAdmin writes the local administrator's kubeconfig for the address the server
// listens on (addr), reached through loopback when it listens on every address.
func (s *Server) writeLocalAdmin(logger klog.Logger, addr string) error {
	if s.tls.local == nil {
		return nil
	}
	path, err := s.tls.local.ca.WriteKubeconfig(localURL(addr), s.tls.certFile, s.cfg.NodeName, time.Now())
	if err != nil {
		return err
	}
	logger.Info("Wrote the local administrator's credential for the kubelet API", "kubeconfig", path, "user", localadmin.User, "caReused", s.tls.local.ca.Reused())
	return nil
}

// authorizationSummary is the authorization mode for the log, saying who Webhook allows when
// there is no API server to ask.
func (s *Server) authorizationSummary() string {
	if s.cfg.AuthorizationMode == AuthorizationModeWebhook && s.cfg.SubjectAccessReviews == nil {
		return "the local administrator only (Webhook, with no API server to ask)"
	}
	return s.cfg.AuthorizationMode
}

// localURL is the URL a client on this machine reaches a server listening on addr at.
func localURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "https://" + addr
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
		if ip.To4() == nil {
			host = "::1"
		}
	}
	return (&url.URL{Scheme: "https", Host: net.JoinHostPort(host, port)}).String()
}
