package process

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/vk-static/vk-static/lifecycle"
)

// The process runtime does not run ephemeral containers (as the [process] package documentation
// says): the lifecycle leaves them waiting, naming spec.ephemeralContainers and the provider, only
// while it does not say it can.
func TestRuntimeDoesNotRunEphemeralContainers(t *testing.T) {
	_, ok := any((*Runtime)(nil)).(lifecycle.EphemeralRuntime)
	assert.False(t, ok, "the process runtime says it runs ephemeral containers: update doc.go and docs/running-pods.md")
}
