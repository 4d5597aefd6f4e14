package floor

import (
	"net"
	"net/http"
	"net/http/pprof"
	"strconv"
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
