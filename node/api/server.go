package api

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"log"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// shutdownTimeout is how long Run waits for requests in flight once its context ends; they
// see their context end at once, so only a handler that ignores it takes this long.
const shutdownTimeout = 5 * time.Second

// Server is the kubelet API's HTTPS server. Add routes with Handle, then Run it once.
type Server struct {
	cfg   Config
	tls   tlsSettings
	authz authorizer.Authorizer
	mux   *http.ServeMux

	ready chan struct{}
	mu    sync.Mutex
	addr  string
}

// New checks cfg, loads the serving certificate (creating a self-signed one if that is the
// configuration) and the client CA, and builds the authorizer. It starts nothing.
func New(cfg Config) (*Server, error) {
	cfg, err := cfg.complete()
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, mux: http.NewServeMux(), ready: make(chan struct{})}
	if s.tls, err = prepareTLS(cfg); err != nil {
		return nil, err
	}
	s.authz = s.tls.local.authorizer(newAuthorizer(cfg))
	if cfg.Configz != nil {
		h, err := configzHandler(cfg.Configz)
		if err != nil {
			return nil, err
		}
		s.mux.Handle("GET /configz", h)
	}
	if cfg.Profiling {
		s.mux.Handle("GET "+pprofPath, profilingHandler())
	}
	return s, nil
}

// Handle serves pattern (an http.ServeMux pattern) with h, behind authentication and
// authorization like every request. Routes are normally added before Run. h must return once
// its request's context ends, which happens when Run's does: Run cannot stop a hijacked
// (upgraded) connection for it.
func (s *Server) Handle(pattern string, h http.Handler) {
	s.mux.Handle(pattern, h)
}

// Ready is closed once the server listens.
func (s *Server) Ready() <-chan struct{} { return s.ready }

// Addr is the address the server listens on (host:port), once Ready; "" before.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// Run listens and serves HTTPS until ctx ends, then shuts the server down, and returns once its
// own goroutines have stopped. It fails when it cannot listen, or its certificates cannot be
// loaded any more.
func (s *Server) Run(ctx context.Context) (err error) {
	logger := klog.FromContext(ctx).WithName("kubelet-api")
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()

	certs, err := s.tls.newCertificates(logger)
	if err != nil {
		return err
	}
	wg.Go(func() { certs.watch(klog.NewContext(ctx, logger), clock.RealClock{}) })
	authn, err := s.authenticator(certs.clientCAVerifyOptions())
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(s.cfg.Address, strconv.Itoa(s.cfg.Port)))
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.addr = ln.Addr().String()
	s.mu.Unlock()
	s.tls.log(logger)
	if err := s.writeLocalAdmin(logger, s.addr); err != nil {
		ln.Close()
		return err
	}
	if s.cfg.Anonymous && s.cfg.AuthorizationMode == AuthorizationModeAlwaysAllow {
		logger.Info("Warning: anonymous requests are allowed everything: anyone who reaches the port can use the kubelet API")
	}

	srv := &http.Server{
		Handler:   &guard{nodeName: s.cfg.NodeName, authn: authn, authz: s.authz, next: s.mux, logger: logger},
		TLSConfig: certs.serverConfig(s.cfg.ServingCertificate),
		// Not HTTP/2 (see the TLS config's NextProtos): a non-nil empty map turns it off.
		TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){},
		// Request contexts end when Run's does, so that streams stop with the server.
		BaseContext: func(net.Listener) context.Context { return ctx },
		// The kubelet's limits; ReadHeaderTimeout besides, so that a silent client cannot hold
		// a connection for the kubelet's four hours.
		ReadHeaderTimeout: 30 * time.Second,
		ReadTimeout:       4 * time.Hour,
		WriteTimeout:      4 * time.Hour,
		IdleTimeout:       90 * time.Second,
		MaxHeaderBytes:    1 << 20,
		// TLS handshake failures (scanners, clients that distrust a self-signed certificate)
		// go to the agent's log at a verbosity of their own, not to stderr.
		ErrorLog: log.New(logWriter{logger.V(3)}, "", 0),
	}
	served := make(chan error, 1)
	wg.Go(func() { served <- srv.ServeTLS(ln, "", "") })
	logger.Info("Serving the kubelet API", "address", s.addr, "authorization", s.authorizationSummary(),
		"clientCA", s.cfg.ClientCAFile != "", "tokenWebhook", s.cfg.tokenWebhook(), "anonymous", s.cfg.Anonymous, "localAdmin", s.tls.local != nil, "profiling", s.cfg.Profiling)
	close(s.ready)

	select {
	case err = <-served: // it stopped by itself: a failure
		return err
	case <-ctx.Done():
	}
	cancel() // ends every request's context
	shutdownCtx, stop := context.WithTimeout(context.Background(), shutdownTimeout)
	defer stop()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		_ = srv.Close()
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// logWriter turns the http.Server's error log lines into klog messages.
type logWriter struct{ logger klog.Logger }

func (w logWriter) Write(p []byte) (int, error) {
	w.logger.Info(string(bytes.TrimSpace(p)))
	return len(p), nil
}
