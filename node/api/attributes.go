package api

import (
	"net/http"
	"strings"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// subresourceRule maps the paths at and under prefix to a subresource of nodes.
type subresourceRule struct {
	prefix, subresource string
}

// The kubelet's mapping (v1.36, pkg/kubelet/server/auth.go, with KubeletFineGrainedAuthz, GA and
// locked on since 1.36). A path matches at most one rule of each list, first match wins; a request
// is allowed when any of its attributes is, fine-grained first, so a user with the narrow
// nodes/pods may list pods without nodes/proxy, and nodes/proxy still covers everything.
var (
	fineGrainedRules = []subresourceRule{
		{"/pods", "pods"},
		{"/healthz", "healthz"},
		{"/configz", "configz"},
		{"/runningpods/", "pods"},
	}
	subresourceRules = []subresourceRule{
		{"/stats/", "stats"},
		{"/metrics", "metrics"},
		{"/logs/", "log"}, // "log" as for pods/log
		{"/checkpoint/", "checkpoint"},
		{"/statusz", "statusz"},
		{"/flagz", "configz"},
	}
)

// requestAttributes is what a request asks to do, as the kubelet's authorizer attributes: verb
// from the HTTP method (GET get, POST create, PUT update, PATCH patch, DELETE delete, any other
// none), resource nodes, name nodeName, and one attribute per subresource the path maps to —
// the fine-grained one, if any, then stats, metrics, log, checkpoint, statusz, configz or, for
// everything else (/containerLogs, /exec, /attach, /portForward, /run, …), proxy.
//
// As in the kubelet, an upgrade is judged by its method alone: a WebSocket exec, attach or
// portForward is a GET and needs only get on nodes/proxy, a SPDY one is a POST and needs create.
func requestAttributes(nodeName string, u user.Info, r *http.Request) []authorizer.Attributes {
	path := r.URL.Path
	var subresources []string
	if s, ok := match(fineGrainedRules, path); ok {
		subresources = append(subresources, s)
	}
	if s, ok := match(subresourceRules, path); ok {
		subresources = append(subresources, s)
	} else {
		subresources = append(subresources, "proxy")
	}
	verb := apiVerb(r.Method)
	attrs := make([]authorizer.Attributes, 0, len(subresources))
	for _, s := range subresources {
		attrs = append(attrs, authorizer.AttributesRecord{
			User:            u,
			Verb:            verb,
			APIVersion:      "v1",
			Resource:        "nodes",
			Subresource:     s,
			Name:            nodeName,
			ResourceRequest: true,
			Path:            path,
		})
	}
	return attrs
}

func match(rules []subresourceRule, path string) (string, bool) {
	for _, r := range rules {
		if isSubpath(path, r.prefix) {
			return r.subresource, true
		}
	}
	return "", false
}

// isSubpath reports whether subpath is path or below it (the kubelet's test: /podsx is not
// below /pods).
func isSubpath(subpath, path string) bool {
	path = strings.TrimSuffix(path, "/")
	return subpath == path || (strings.HasPrefix(subpath, path) && subpath[len(path)] == '/')
}

func apiVerb(method string) string {
	switch method {
	case http.MethodGet:
		return "get"
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		return "delete"
	}
	return ""
}
