package api

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/podutil"
)

// probing is a provider whose probes counted what results holds.
type probing struct {
	bareProvider
	results *prometheus.CounterVec
}

func (p probing) ProbeMetrics() prometheus.Collector { return p.results }

// /metrics/probes serves the provider's probe metrics as they are, and the kubelet's
// process_start_time_seconds beside them: this process's start, in seconds since the epoch.
// The mock, which probes nothing, serves that alone — no error.
func TestProbeMetrics(t *testing.T) {
	e := newRouteEnv(t)
	e.run(t, testPod("ns", "web", "api-uid", podutil.APIServerSource, "main"))
	results := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "prober_probe_total", Help: "[BETA] Cumulative number of a liveness, readiness or startup probe for a container by result."},
		[]string{"probe_type", "result", "container", "pod", "namespace", "pod_uid"})
	results.WithLabelValues("Readiness", "successful", "main", "web", "ns", "api-uid").Add(3)

	scrapeProbes := func(t *testing.T, rt Routes) map[string]string {
		t.Helper()
		srv := httptest.NewServer(guarded(t, rt))
		t.Cleanup(srv.Close)
		code, contentType, body := scrape(t, srv, "/metrics/probes")
		require.Equal(t, http.StatusOK, code, body)
		assert.Contains(t, contentType, "text/plain; version=0.0.4")
		parser := expfmt.NewTextParser(model.UTF8Validation)
		families, err := parser.TextToMetricFamilies(bytes.NewReader([]byte(body)))
		require.NoError(t, err, body)
		start := families["process_start_time_seconds"]
		require.NotNil(t, start, body)
		assert.Equal(t, "[ALPHA] Start time of the process since unix epoch in seconds.", start.GetHelp())
		require.Len(t, start.GetMetric(), 1)
		started := time.Unix(int64(start.GetMetric()[0].GetGauge().GetValue()), 0)
		assert.WithinRange(t, started, time.Now().Add(-time.Hour), time.Now(), "this test process's start")
		out := map[string]string{}
		for name, f := range families {
			out[name] = f.GetType().String()
		}
		return out
	}

	assert.Equal(t, map[string]string{"process_start_time_seconds": "GAUGE"}, scrapeProbes(t, Routes{Pods: e.pods, Provider: e.provider}))

	srv := httptest.NewServer(guarded(t, Routes{Pods: e.pods, Provider: probing{bareProvider{e.provider}, results}}))
	t.Cleanup(srv.Close)
	code, _, body := scrape(t, srv, "/metrics/probes")
	require.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, `# HELP prober_probe_total [BETA] Cumulative number of a liveness, readiness or startup probe for a container by result.
# TYPE prober_probe_total counter
prober_probe_total{container="main",namespace="ns",pod="web",pod_uid="api-uid",probe_type="Readiness",result="successful"} 3
`)
	assert.Equal(t, map[string]string{"process_start_time_seconds": "GAUGE", "prober_probe_total": "COUNTER"},
		scrapeProbes(t, Routes{Pods: e.pods, Provider: probing{bareProvider{e.provider}, results}}))
}

// processStart reads what component-base's GetProcessStart reads; a process's start is in
// whole clock ticks (10 ms) after the boot.
func TestProcessStart(t *testing.T) {
	start, err := readProcessStart()
	require.NoError(t, err)
	assert.WithinRange(t, time.Unix(0, int64(start*1e9)), time.Now().Add(-time.Hour), time.Now())
	assert.InDelta(t, start, processStart(time.Now()), 0)
}

// /metrics/probes and /metrics/cadvisor are authorized as every /metrics path, the kubelet's
// way: get on nodes/metrics lets a user scrape them, and nothing else is asked; nodes/proxy
// alone does not.
func TestMetricsRoutesAuthorizedAsMetrics(t *testing.T) {
	e := newRouteEnv(t)
	mux := http.NewServeMux()
	Routes{Pods: e.pods, Provider: e.provider, Node: testNode()}.Register(mux)
	alice := &user.DefaultInfo{Name: "alice"}
	for _, path := range []string{"/metrics/probes", "/metrics/cadvisor"} {
		for _, allowed := range []string{"metrics", "proxy", "stats"} {
			t.Run(path+" with nodes/"+allowed, func(t *testing.T) {
				var asked []string
				g := &guard{nodeName: "node-a", logger: klog.Background(), next: mux,
					authn: authenticator.RequestFunc(func(*http.Request) (*authenticator.Response, bool, error) {
						return &authenticator.Response{User: alice}, true, nil
					}),
					authz: authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
						asked = append(asked, a.GetVerb()+" "+a.GetResource()+"/"+a.GetSubresource())
						if a.GetSubresource() == allowed {
							return authorizer.DecisionAllow, "", nil
						}
						return authorizer.DecisionNoOpinion, "", nil
					})}
				w := httptest.NewRecorder()
				g.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
				assert.Equal(t, []string{"get nodes/metrics"}, asked)
				if allowed == "metrics" {
					assert.Equal(t, http.StatusOK, w.Code, w.Body.String())
					assert.Contains(t, w.Header().Get("Content-Type"), "text/plain; version=0.0.4")
					return
				}
				assert.Equal(t, http.StatusForbidden, w.Code)
				assert.Equal(t, "Forbidden (user=alice, verb=get, resource=nodes, subresource(s)=[metrics])\n", w.Body.String())
			})
		}
	}
}
