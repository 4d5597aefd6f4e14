package api

import (
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// The kubelet's mapping, case by case: what a path and method ask to do on nodes/<name>.
func TestRequestAttributes(t *testing.T) {
	for _, tc := range []struct {
		method, path string
		upgrade      string // Upgrade header: the method alone decides, as in the kubelet
		verb         string
		subresources []string
	}{
		{"GET", "/pods", "", "get", []string{"pods", "proxy"}},
		{"GET", "/pods/", "", "get", []string{"pods", "proxy"}},
		{"GET", "/podsx", "", "get", []string{"proxy"}}, // not below /pods
		{"GET", "/runningpods/", "", "get", []string{"pods", "proxy"}},
		{"GET", "/runningpods", "", "get", []string{"pods", "proxy"}},
		{"GET", "/healthz", "", "get", []string{"healthz", "proxy"}},
		{"GET", "/configz", "", "get", []string{"configz", "proxy"}},
		{"GET", "/stats/summary", "", "get", []string{"stats"}},
		{"GET", "/stats", "", "get", []string{"stats"}},
		{"GET", "/metrics", "", "get", []string{"metrics"}},
		{"GET", "/metrics/resource", "", "get", []string{"metrics"}},
		{"GET", "/metricsx", "", "get", []string{"proxy"}},
		{"GET", "/logs/syslog", "", "get", []string{"log"}},
		{"GET", "/logs", "", "get", []string{"log"}},
		{"POST", "/checkpoint/ns/pod/c", "", "create", []string{"checkpoint"}},
		{"GET", "/statusz", "", "get", []string{"statusz"}},
		{"GET", "/flagz", "", "get", []string{"configz"}},
		{"GET", "/containerLogs/ns/pod/c", "", "get", []string{"proxy"}},
		{"POST", "/exec/ns/pod/c", "SPDY/3.1", "create", []string{"proxy"}},
		{"GET", "/exec/ns/pod/c", "websocket", "get", []string{"proxy"}},
		{"GET", "/attach/ns/pod/c", "websocket", "get", []string{"proxy"}},
		{"POST", "/portForward/ns/pod", "SPDY/3.1", "create", []string{"proxy"}},
		{"GET", "/portForward/ns/pod", "websocket", "get", []string{"proxy"}},
		{"POST", "/run/ns/pod/c", "", "create", []string{"proxy"}},
		{"GET", "/debug/pprof/profile", "", "get", []string{"proxy"}}, // the kubelet's too: no subresource of its own
		{"GET", "/debug/pprof/cmdline", "", "get", []string{"proxy"}},
		{"GET", "/", "", "get", []string{"proxy"}},
		{"GET", "/anything/else", "", "get", []string{"proxy"}},
		{"PUT", "/x", "", "update", []string{"proxy"}},
		{"PATCH", "/x", "", "patch", []string{"proxy"}},
		{"DELETE", "/x", "", "delete", []string{"proxy"}},
		{"HEAD", "/x", "", "", []string{"proxy"}},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			r := httptest.NewRequest(tc.method, "https://node:10250"+tc.path+"?command=ls", nil)
			if tc.upgrade != "" {
				r.Header.Set("Connection", "Upgrade")
				r.Header.Set("Upgrade", tc.upgrade)
			}
			u := &user.DefaultInfo{Name: "alice", Groups: []string{"dev"}}
			attrs := requestAttributes("node-a", u, r)
			var got []string
			for _, a := range attrs {
				got = append(got, a.GetSubresource())
				assert.Equal(t, authorizer.AttributesRecord{
					User: u, Verb: tc.verb, APIVersion: "v1", Resource: "nodes", Subresource: a.GetSubresource(),
					Name: "node-a", ResourceRequest: true, Path: tc.path,
				}, a)
			}
			assert.Equal(t, tc.subresources, got)
		})
	}
}
