package agentproc

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The agent built with BuildTags links no package that calls methods by names known only at
// run time (text/template, html/template): one such call makes the linker keep every exported
// method of every type, 30 MB of binary and about 10 MB of every agent's resident memory.
func TestAgentLinksNoTemplates(t *testing.T) {
	out, err := exec.Command("go", "list", "-tags", BuildTags, "-deps", "github.com/vk-static/vk-static/cmd/vk-static").Output()
	require.NoError(t, err, "go list -deps")
	deps := strings.Fields(string(out))
	require.Contains(t, deps, "github.com/vk-static/vk-static/agent")
	for _, pkg := range []string{"html/template", "golang.org/x/net/trace"} {
		assert.NotContains(t, deps, pkg, "the agent links %s: find what imports it (go list -deps -f '{{.ImportPath}} {{.Imports}}') and keep it out, or build it away with a tag in BuildTags and the Makefile's BUILD_TAGS", pkg)
	}
}
