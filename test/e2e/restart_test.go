package e2e

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAgentRestartKeepsMirrors: a restarted agent derives the same static pod UIDs, so the
// existing mirror pods are current and neither deleted nor duplicated.
func TestAgentRestartKeepsMirrors(t *testing.T) {
	a := startAgent(t, agentOptions{})
	a.WriteManifest("web.yaml", manifest("web", "nginx:1"))
	before := a.runningMirror("web", "nginx:1")

	a.restart()
	after := a.runningMirror("web", "nginx:1")
	if after.UID != before.UID {
		t.Errorf("mirror recreated across an agent restart: %s → %s", before.UID, after.UID)
	}
	if n := a.metric(t, "vk_static_mirror_pod_operations_total"); n != 0 {
		t.Errorf("%v mirror operations after the restart, want 0", n)
	}
}

// TestManifestEditedWhileAgentDown: the stale mirror found at start-up is replaced by the
// edited pod's.
func TestManifestEditedWhileAgentDown(t *testing.T) {
	a := startAgent(t, agentOptions{})
	a.WriteManifest("web.yaml", manifest("web", "nginx:1"))
	before := a.runningMirror("web", "nginx:1")
	a.Stop()
	a.WriteManifest("web.yaml", manifest("web", "nginx:2"))
	a.restart() // already stopped: starts it again
	after := a.runningMirror("web", "nginx:2")
	if after.UID == before.UID {
		t.Fatal("stale mirror kept")
	}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		if n := a.metric(c, "vk_static_provider_pods"); n != 1 {
			c.Errorf("provider runs %v pods", n)
		}
	}, 10*time.Second, 50*time.Millisecond, "one provider pod")
}
