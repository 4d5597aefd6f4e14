package bench

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"

	"k8s.io/client-go/kubernetes"
)

// requestCounts are API requests by "VERB resource[/subresource]", with the API server's
// verbs (LIST and WATCH are told apart from GET; POST is a create).
type requestCounts map[string]float64

// apiCounters is one scrape of the API server's request counters.
type apiCounters struct {
	// Requests is apiserver_request_total summed over codes, scopes and versions.
	Requests requestCounts
	// NodeFlows is the number of requests dispatched for the flow schemas that match the
	// system:nodes group (system-nodes, system-node-high): exactly the agent's requests, since
	// the agent is the only node identity talking, but without verbs.
	NodeFlows float64
	// Watches is how many watches are open now (apiserver_longrunning_requests, WATCH).
	Watches float64
	// WatchesClosed are the watches the API server closed because their client did not take
	// events fast enough (apiserver_terminated_watchers_total: the watch cache gives a blocked
	// watcher at most 100 ms, and a pod watch narrowed to one node a buffer of only 10
	// events), by "WATCH resource" as in Requests. The client opens a new watch from where
	// it was, which apiserver_request_total counts — when it ends: a WATCH is counted when it
	// closes, so a phase's WATCH count is the watches that ended in it.
	WatchesClosed requestCounts
}

// scrapeAPIServer reads /metrics of the API server with the admin client.
func scrapeAPIServer(ctx context.Context, admin kubernetes.Interface) (apiCounters, error) {
	body, err := admin.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return apiCounters{}, fmt.Errorf("scrape API server metrics: %w", err)
	}
	return parseAPICounters(string(body)), nil
}

func parseAPICounters(text string) apiCounters {
	c := apiCounters{Requests: requestCounts{}, WatchesClosed: requestCounts{}}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		name, labels, value, ok := parseSample(sc.Text())
		if !ok {
			continue
		}
		switch name {
		case "apiserver_request_total":
			key := labels["verb"] + " " + labels["resource"]
			if sub := labels["subresource"]; sub != "" {
				key += "/" + sub
			}
			c.Requests[key] += value
		case "apiserver_terminated_watchers_total":
			c.WatchesClosed["WATCH "+labels["resource"]] += value
		case "apiserver_longrunning_requests":
			if labels["verb"] == "WATCH" {
				c.Watches += value
			}
		case "apiserver_flowcontrol_dispatched_requests_total":
			if strings.HasPrefix(labels["flow_schema"], "system-node") {
				c.NodeFlows += value
			}
		}
	}
	return c
}

// parseSample parses one line of the Prometheus text format: name{k="v",...} value.
func parseSample(line string) (name string, labels map[string]string, value float64, ok bool) {
	if line == "" || line[0] == '#' {
		return "", nil, 0, false
	}
	labels = map[string]string{}
	rest := line
	if i := strings.IndexByte(line, '{'); i >= 0 {
		j := strings.LastIndexByte(line, '}')
		if j < i {
			return "", nil, 0, false
		}
		name, rest = line[:i], line[j+1:]
		for _, kv := range splitLabels(line[i+1 : j]) {
			k, v, found := strings.Cut(kv, "=")
			if !found {
				continue
			}
			if uq, err := strconv.Unquote(v); err == nil {
				v = uq
			}
			labels[k] = v
		}
	} else {
		sp := strings.IndexByte(line, ' ')
		if sp < 0 {
			return "", nil, 0, false
		}
		name, rest = line[:sp], line[sp:]
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 {
		return "", nil, 0, false
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return "", nil, 0, false
	}
	return name, labels, v, true
}

// splitLabels splits k="v",k2="v2" on the commas outside quotes.
func splitLabels(s string) []string {
	var out []string
	inQuote, escaped, start := false, false, 0
	for i := 0; i < len(s); i++ {
		switch {
		case escaped:
			escaped = false
		case s[i] == '\\':
			escaped = true
		case s[i] == '"':
			inQuote = !inQuote
		case s[i] == ',' && !inQuote:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// sub returns after − before, dropping keys that did not grow. It also removes the requests
// the load driver made itself from a phase's counts, so what is left is the agent's (plus the
// API server's own background requests, a handful a minute).
func (after requestCounts) sub(before requestCounts) requestCounts {
	d := requestCounts{}
	for k, v := range after {
		if n := v - before[k]; n > 0 {
			d[k] = n
		}
	}
	return d
}

// apiUse is the agent's use of the API server in a window: its requests, the exact count of
// requests from node identities, and how many of its watches the server closed as too slow.
type apiUse struct {
	Requests     requestCounts
	NodeRequests float64
	// WatchesClosed is the watches the API server closed in the window because they did not
	// take events fast enough, less the load driver's own (each of which it re-opened, a
	// WATCH of its own in the window), by "WATCH resource". Each is a WATCH in Requests.
	WatchesClosed requestCounts
	// ControlPlaneCPUSeconds is the CPU etcd and the API server used in the window, for every
	// client but the harness's scrapes of /metrics (the load driver's requests are the same
	// for every agent): what the agent's writes cost the server they share.
	ControlPlaneCPUSeconds float64
}

// agentUse is the agent's part of what changed between two scrapes of the API server: the
// server's counters minus the load driver's requests (driver: its requests in the window)
// and the server's housekeeping.
func agentUse(before, after apiCounters, driver requestCounts) apiUse {
	return apiUse{
		Requests:     after.Requests.sub(before.Requests).sub(driver).withoutServerBackground(),
		NodeRequests: after.NodeFlows - before.NodeFlows,
		// Keyed like Requests, so the driver's re-opened watches (its WATCH requests) come off.
		WatchesClosed: after.WatchesClosed.sub(before.WatchesClosed).sub(driver),
	}
}

// withoutServerBackground drops the API server's own housekeeping, which its loopback client
// makes whatever the agent does: endpoints of the kubernetes service, its informers' lists,
// OpenAPI aggregation. A node identity may write none of these, so nothing of the agent's is
// lost. (The API server's own lease renewal, PUT leases in kube-system every 10 s, cannot be
// told apart from the agent's and stays in.)
func (rc requestCounts) withoutServerBackground() requestCounts {
	d := requestCounts{}
	for k, v := range rc {
		_, resource, _ := strings.Cut(k, " ")
		switch {
		case resource == "" || strings.HasPrefix(resource, "/"):
		case resource == "endpoints" || resource == "endpointslices" || resource == "limitranges" ||
			resource == "services" || resource == "resourcequotas" || resource == "apiservices":
		default:
			d[k] = v
		}
	}
	return d
}

// podWrites sums the writes that belong to pods: pod creates (mirrors), status patches,
// deletes and events.
func (rc requestCounts) podWrites() float64 {
	var n float64
	for k, v := range rc {
		_, resource, _ := strings.Cut(k, " ")
		base, _, _ := strings.Cut(resource, "/")
		if isWrite(k) && (base == "pods" || base == "events") {
			n += v
		}
	}
	return n
}

// total sums every request.
func (rc requestCounts) total() float64 {
	var n float64
	for _, v := range rc {
		n += v
	}
	return n
}

// writes sums the mutating requests.
func (rc requestCounts) writes() float64 {
	var n float64
	for k, v := range rc {
		if isWrite(k) {
			n += v
		}
	}
	return n
}

func isWrite(key string) bool {
	verb, _, _ := strings.Cut(key, " ")
	switch verb {
	case "POST", "PUT", "PATCH", "DELETE", "DELETECOLLECTION", "APPLY":
		return true
	}
	return false
}

func (rc requestCounts) String() string {
	keys := make([]string, 0, len(rc))
	for k := range rc {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%.0f", k, rc[k]))
	}
	return strings.Join(parts, " ")
}

// requestCounter counts the load driver's own requests with the API server's verb and
// resource names, so they can be subtracted from the server's counters. Every transport that
// wrap returns shares it.
type requestCounter struct {
	mu   sync.Mutex
	seen requestCounts
}

func newRequestCounter() *requestCounter { return &requestCounter{seen: requestCounts{}} }

// wrap is a rest.Config WrapTransport.
func (c *requestCounter) wrap(next http.RoundTripper) http.RoundTripper {
	return countingTransport{next: next, counter: c}
}

func (c *requestCounter) snapshot() requestCounts {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(requestCounts, len(c.seen))
	for k, v := range c.seen {
		out[k] = v
	}
	return out
}

type countingTransport struct {
	next    http.RoundTripper
	counter *requestCounter
}

func (t countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if key, ok := requestKey(req); ok {
		t.counter.mu.Lock()
		t.counter.seen[key]++
		t.counter.mu.Unlock()
	}
	return t.next.RoundTrip(req)
}

// requestKey maps a resource request (/api/v1/..., /apis/G/V/...) to "VERB resource[/sub]".
// Non-resource requests (/metrics) are not resource requests for the server either.
func requestKey(req *http.Request) (string, bool) {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return "", false
	}
	// parts: [namespaces NS] resource [name [subresource]]
	if len(parts) >= 3 && parts[0] == "namespaces" {
		parts = parts[2:]
	}
	if len(parts) == 0 {
		return "", false
	}
	resource, named := parts[0], len(parts) >= 2
	if len(parts) >= 3 {
		resource += "/" + parts[2]
	}
	verb := req.Method
	if verb == http.MethodGet && !named {
		verb = "LIST"
		if w := req.URL.Query().Get("watch"); w == "true" || w == "1" {
			verb = "WATCH"
		}
	}
	if verb == http.MethodDelete && !named {
		verb = "DELETECOLLECTION"
	}
	return verb + " " + resource, true
}
