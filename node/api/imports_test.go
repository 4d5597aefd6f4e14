package api

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// heavyPackages are what k8s.io/apiserver's authenticator and authorizer factories bring in —
// the webhook plugins, CEL and its parser, the API server's configuration API — which this
// package does without (authn.go, authz.go), and the apiserver's x509 authenticator, whose
// histogram links component-base metrics and OpenTelemetry (package clientcert instead): each
// a path or, ending in "/", a tree.
var heavyPackages = []string{
	"github.com/google/cel-go/",
	"github.com/antlr4-go/antlr/",
	"k8s.io/apiserver/plugin/",
	"k8s.io/apiserver/pkg/util/webhook",
	"k8s.io/apiserver/pkg/cel/",
	"k8s.io/apiserver/pkg/apis/apiserver/",
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory",
	"k8s.io/apiserver/pkg/authorization/authorizerfactory",
	"k8s.io/apiserver/pkg/authentication/request/x509",
}

// TestAgentLinksNoHeavyAuth keeps the agent's binary free of heavyPackages: every megabyte of
// linked code is resident memory of every agent (issue 14: they grew the agent's binary from
// 77 to 88 MB), for what a TokenReview and a SubjectAccessReview do.
func TestAgentLinksNoHeavyAuth(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go tool to list the agent's packages: %v", err)
	}
	const agent = "github.com/vk-static/vk-static/cmd/vk-static"
	out, err := exec.Command(goTool, "list", "-deps", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", agent).Output()
	require.NoError(t, err, "go list -deps %s", agent)
	importers := map[string][]string{} // package → the agent's packages importing it
	var deps []string
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		deps = append(deps, fields[0])
		for _, imported := range fields[1:] {
			importers[imported] = append(importers[imported], fields[0])
		}
	}
	require.Contains(t, deps, "github.com/vk-static/vk-static/node/api")
	for _, pkg := range deps {
		for _, heavy := range heavyPackages {
			if pkg == strings.TrimSuffix(heavy, "/") || (strings.HasSuffix(heavy, "/") && strings.HasPrefix(pkg, heavy)) {
				assert.Fail(t, "the agent links a heavy package",
					"%s (imported by %v): each MB of linked code is resident memory of every agent (issue 14); authenticate and authorize with node/api's own TokenReview and SubjectAccessReview code and k8s.io/apiserver's light request packages instead",
					pkg, importers[pkg])
			}
		}
	}
}
