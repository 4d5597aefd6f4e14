package floor

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/klog/v2"

	"net"
	"net/http"
	"net/http/pprof"
	"strconv"

	"github.com/vk-static/vk-static/bench/agentflags"
)

// ServeHealth serves what the bench reads of a floor agent on the healthz address, as vk-static
// serves it: /healthz, /readyz (ready answers it), an empty /metrics (the floors have no
// metrics of their own: the bench's scrapes find nothing rather than fail) and, with
// profiling, /debug/pprof. Close the server it returns to stop.
func ServeHealth(addr string, port int, profiling bool, ready func() bool) (*http.Server, error) {
	mux := http.NewServeMux()
	ok := func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }
	mux.HandleFunc("/healthz", ok)
	mux.HandleFunc("/metrics", func(http.ResponseWriter, *http.Request) {})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		if !ready() {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		ok(w, r)
	})
	if profiling {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(addr, strconv.Itoa(port)))
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: mux}
	go func() { _ = srv.Serve(ln) }()
	return srv, nil
}

// Serve runs an agent until SIGINT or SIGTERM, with its /healthz and /readyz (and, with
// profiling, /debug/pprof) served on the healthz address meanwhile.
func Serve(f agentflags.Flags, ready func() bool, run func(context.Context) error) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx = klog.NewContext(ctx, klog.Background())
	srv, err := ServeHealth(f.HealthzAddr, f.HealthzPort, f.Profiling, ready)
	if err != nil {
		return err
	}
	defer srv.Close()
	return run(ctx)
}
