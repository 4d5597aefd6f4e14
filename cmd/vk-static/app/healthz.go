package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/klog/v2"
)

// healthzServer serves /healthz, /readyz and /metrics on the loopback healthz address, like the
// kubelet's healthz port. It is plain HTTP, with no authentication: 127.0.0.1 is reached by every
// user of the machine and every host-network pod. So it serves nothing that tells more than
// whether the agent is well and what it counts; /debug/pprof (--profiling) is on the
// authenticated kubelet API on --port (node/api), as the kubelet serves it.
type healthzServer struct {
	addr     string
	registry *prometheus.Registry
	ready    <-chan struct{}
	// runtime says why the container runtime cannot run pods (the Node's Ready message); nil
	// for a provider that reports no runtime health.
	runtime func() error
}

func (s *healthzServer) Run(ctx context.Context) error {
	mux := http.NewServeMux()
	// Both say what the Node's Ready condition says of the runtime, the pod network aside (the
	// kubelet's sync loop, which its healthz watches, waits for the runtime only and runs
	// host-network pods without a network).
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		if err := s.runtimeErr(); err != nil {
			http.Error(w, "runtime: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, "ok")
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		select {
		case <-s.ready:
		default:
			http.Error(w, "pod controller not started", http.StatusServiceUnavailable)
			return
		}
		if err := s.runtimeErr(); err != nil {
			http.Error(w, "runtime: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, "ok")
	})
	mux.Handle("/metrics", promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{}))
	l, err := net.Listen("tcp", s.addr)
	if err != nil {
		return fmt.Errorf("healthz: %w", err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdownCtx)
	}()
	klog.FromContext(ctx).Info("Serving healthz", "address", l.Addr().String())
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("healthz: %w", err)
	}
	return nil
}

// runtimeErr is why the runtime cannot run pods, nil when it can or nobody says.
func (s *healthzServer) runtimeErr() error {
	if s.runtime == nil {
		return nil
	}
	return s.runtime()
}
