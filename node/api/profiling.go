package api

import (
	"net/http"
	"net/http/pprof"
	"strings"
)

// pprofPath is where the kubelet serves net/http/pprof (pkg/kubelet/server/server.go,
// pprofBasePath).
const pprofPath = "/debug/pprof/"

// profilingHandler serves the paths under pprofPath as the kubelet's InstallProfilingHandler
// does: profile, symbol, cmdline and trace by name, and everything else — the index, and the
// named profiles such as heap and goroutine — through pprof.Index. It is written out rather than
// taken from net/http/pprof's registrations, which are on http.DefaultServeMux.
func profilingHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch strings.TrimPrefix(r.URL.Path, pprofPath) {
		case "profile":
			pprof.Profile(w, r)
		case "symbol":
			pprof.Symbol(w, r)
		case "cmdline":
			pprof.Cmdline(w, r)
		case "trace":
			pprof.Trace(w, r)
		default:
			pprof.Index(w, r)
		}
	})
}
