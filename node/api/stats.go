package api

import (
	"net/http"

	"github.com/vk-static/vk-static/provider"
)

// statsSummary serves /stats/summary: the provider's Summary as JSON, what metrics-server and
// kubectl top read. Pod references carry the UID the provider was given (a static pod's own,
// not its mirror's), as the kubelet's do. The kubelet's only_cpu_and_memory parameter needs no
// handling: a StatsSummaryHandler reports CPU and memory only.
func (rt Routes) statsSummary(w http.ResponseWriter, r *http.Request) {
	stats, ok := capability[provider.StatsSummaryHandler](w, rt.Provider)
	if !ok {
		return
	}
	summary, err := stats.GetStatsSummary(r.Context())
	if err != nil {
		writeProviderError(w, r, err)
		return
	}
	writeJSON(w, r, summary)
}
