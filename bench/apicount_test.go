package bench

import (
	"net/http"
	"net/url"
	"os"
	"reflect"
	"testing"
)

func pidSelf() int { return os.Getpid() }

func TestParseAPICounters(t *testing.T) {
	text := `# HELP apiserver_request_total [STABLE] Counter of apiserver requests
# TYPE apiserver_request_total counter
apiserver_request_total{code="201",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="POST",version="v1"} 1000
apiserver_request_total{code="409",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="POST",version="v1"} 3
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="status",verb="PATCH",version="v1"} 2000
apiserver_request_total{code="200",component="apiserver",dry_run="",group="coordination.k8s.io",resource="leases",scope="resource",subresource="",verb="PUT",version="v1"} 1.5e+01
apiserver_flowcontrol_dispatched_requests_total{flow_schema="system-nodes",priority_level="system"} 3000
apiserver_flowcontrol_dispatched_requests_total{flow_schema="system-node-high",priority_level="node-high"} 20
apiserver_flowcontrol_dispatched_requests_total{flow_schema="exempt",priority_level="exempt"} 999
apiserver_request_total{weird="a,b=\"c\"",verb="GET",resource="nodes"} 2
`
	got := parseAPICounters(text)
	want := apiCounters{
		Requests:      requestCounts{"POST pods": 1003, "PATCH pods/status": 2000, "PUT leases": 15, "GET nodes": 2},
		NodeFlows:     3020,
		WatchesClosed: requestCounts{},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parseAPICounters =\n%+v\nwant\n%+v", got, want)
	}
}

func TestRequestCountsArithmetic(t *testing.T) {
	before := requestCounts{"POST pods": 10, "PATCH pods/status": 5}
	after := requestCounts{"POST pods": 1010, "PATCH pods/status": 2005, "POST events": 1000, "LIST pods": 1}
	driver := requestCounts{"POST pods": 1000, "LIST pods": 1}
	agent := after.sub(before).sub(driver)
	want := requestCounts{"PATCH pods/status": 2000, "POST events": 1000}
	if !reflect.DeepEqual(agent, want) {
		t.Errorf("agent requests = %v, want %v", agent, want)
	}
	if w := agent.writes(); w != 3000 {
		t.Errorf("writes = %v, want 3000", w)
	}
	if w := (requestCounts{"GET pods": 4, "WATCH pods": 1, "LIST pods": 2}).writes(); w != 0 {
		t.Errorf("reads counted as writes: %v", w)
	}
}

func TestRequestKey(t *testing.T) {
	tests := []struct {
		method, url string
		want        string
		ok          bool
	}{
		{"POST", "/api/v1/namespaces/ns/pods", "POST pods", true},
		{"DELETE", "/api/v1/namespaces/ns/pods/p1", "DELETE pods", true},
		{"GET", "/api/v1/namespaces/ns/pods/p1", "GET pods", true},
		{"GET", "/api/v1/namespaces/ns/pods", "LIST pods", true},
		{"GET", "/api/v1/namespaces/ns/pods?watch=true&resourceVersion=5", "WATCH pods", true},
		{"PATCH", "/api/v1/namespaces/ns/pods/p1/status", "PATCH pods/status", true},
		{"POST", "/api/v1/namespaces", "POST namespaces", true},
		{"DELETE", "/api/v1/namespaces/ns", "DELETE namespaces", true},
		{"DELETE", "/api/v1/nodes/n1", "DELETE nodes", true},
		{"PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1", "PUT leases", true},
		{"DELETE", "/api/v1/namespaces/ns/pods", "DELETECOLLECTION pods", true},
		{"GET", "/metrics", "", false},
		{"GET", "/api", "", false},
	}
	for _, tt := range tests {
		u, err := url.Parse(tt.url)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := requestKey(&http.Request{Method: tt.method, URL: u})
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s %s: got %q, %v; want %q, %v", tt.method, tt.url, got, ok, tt.want, tt.ok)
		}
	}
}

func TestServerBackgroundAndPodWrites(t *testing.T) {
	rc := requestCounts{
		"PATCH pods/status": 1000, "POST events": 1000, "POST pods": 10, "DELETE pods": 5,
		"PUT leases": 6, "PATCH nodes/status": 6, "GET nodes": 6,
		"POST endpoints": 6, "GET endpoints": 6, "LIST limitranges": 1, "GET /openapi/v3": 4, "GET ": 2,
	}
	got := rc.withoutServerBackground()
	want := requestCounts{"PATCH pods/status": 1000, "POST events": 1000, "POST pods": 10, "DELETE pods": 5,
		"PUT leases": 6, "PATCH nodes/status": 6, "GET nodes": 6}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("withoutServerBackground = %v, want %v", got, want)
	}
	if n := got.podWrites(); n != 2015 {
		t.Errorf("podWrites = %v, want 2015 (lease, node and read requests are not per pod)", n)
	}
}

// TestAgentUseWatchesClosed: the API server's count of watches it closed as too slow
// (apiserver_terminated_watchers_total) comes out of a phase beside its WATCH requests, less
// the driver's: the driver re-opens each of its own closed watches, one WATCH each.
func TestAgentUseWatchesClosed(t *testing.T) {
	scrape := func(watches, closed, other string) apiCounters {
		return parseAPICounters(`apiserver_request_total{code="200",group="",resource="pods",scope="cluster",subresource="",verb="WATCH",version="v1"} ` + watches + `
apiserver_request_total{code="200",group="",resource="pods",scope="resource",subresource="status",verb="PATCH",version="v1"} 5
# HELP apiserver_terminated_watchers_total [ALPHA] Counter of watchers closed due to unresponsiveness broken by resource type.
apiserver_terminated_watchers_total{group="",resource="pods"} ` + closed + `
apiserver_terminated_watchers_total{group="",resource="configmaps"} ` + other + `
apiserver_flowcontrol_dispatched_requests_total{flow_schema="system-nodes",priority_level="system"} 7
`)
	}
	before, after := scrape("3", "2", "1"), scrape("70", "62", "1")
	if got := before.WatchesClosed; !reflect.DeepEqual(got, requestCounts{"WATCH pods": 2, "WATCH configmaps": 1}) {
		t.Errorf("parsed WatchesClosed = %v", got)
	}
	// The driver re-opened its namespace watch 5 times in the window.
	driver := requestCounts{"WATCH pods": 5, "POST pods": 100}
	use := agentUse(before, after, driver)
	if want := (requestCounts{"WATCH pods": 62}); !reflect.DeepEqual(use.Requests, want) {
		t.Errorf("Requests = %v, want %v", use.Requests, want)
	}
	if want := (requestCounts{"WATCH pods": 55}); !reflect.DeepEqual(use.WatchesClosed, want) {
		t.Errorf("WatchesClosed = %v, want %v (62 closed, 5 of them the driver's)", use.WatchesClosed, want)
	}
	if use.NodeRequests != 0 {
		t.Errorf("NodeRequests = %v, want 0", use.NodeRequests)
	}
}
