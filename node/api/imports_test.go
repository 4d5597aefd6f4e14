package api

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// clientsetPackages are client-go's full clientset and what brings it in: any typed client
// links client-go's scheme, which registers every API group (issue 28: ~5 MB of the agent's
// resident binary), and k8s.io/apiserver's dynamiccertificates links client-go's events and
// informers. The server takes review clients with just Create (Config) and reloads its
// certificates itself ([certificates]).
var clientsetPackages = []string{
	"k8s.io/client-go/kubernetes",
	"k8s.io/client-go/informers",
	"k8s.io/client-go/discovery",
	"k8s.io/client-go/applyconfigurations",
	"k8s.io/client-go/tools/events",
	"k8s.io/apiserver/pkg/server/dynamiccertificates",
}

// The package links no clientset, whatever imports it: each path above is forbidden with
// everything under it.
func TestLinksNoClientset(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go tool to list the package's dependencies: %v", err)
	}
	const self = "github.com/vk-static/vk-static/node/api"
	out, err := exec.Command(goTool, "list", "-deps", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", self).Output()
	require.NoError(t, err, "go list -deps %s", self)
	importers := map[string][]string{}
	var deps []string
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		deps = append(deps, fields[0])
		for _, imported := range fields[1:] {
			importers[imported] = append(importers[imported], fields[0])
		}
	}
	require.Contains(t, deps, self)
	for _, pkg := range deps {
		for _, f := range clientsetPackages {
			if pkg == f || strings.HasPrefix(pkg, f+"/") {
				assert.Fail(t, "node/api links a package it must not", "%s (imported by %v)", pkg, importers[pkg])
			}
		}
	}
}
