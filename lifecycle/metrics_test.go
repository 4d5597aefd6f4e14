package lifecycle

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clocktesting "k8s.io/utils/clock/testing"
)

// A New that fails registers nothing: the agent's next attempt on the same registry (its
// provider factory retried, a test building another) must not panic on duplicate metrics,
// and no scrape reads a provider that was never returned.
func TestFailedNewLeavesNoMetricsRegistered(t *testing.T) {
	clock := clocktesting.NewFakeClock(time.Date(2026, 11, 25, 7, 0, 0, 0, time.UTC))
	reg := prometheus.NewRegistry()
	root := t.TempDir()
	cfg := func(rt Runtime) Config {
		return Config{Runtime: rt, RuntimeName: "fake", RootDir: root, NodeIPs: []string{"127.0.0.1"}, Clock: clock, Registerer: reg}
	}

	failing := newFakeRuntime(clock)
	failing.listSandboxFailures = 1
	_, err := New(context.Background(), cfg(failing))
	require.ErrorContains(t, err, "list the runtime's sandboxes")
	families, err := reg.Gather()
	require.NoError(t, err)
	assert.Empty(t, families, "a failed New registered metrics")

	p, err := New(context.Background(), cfg(newFakeRuntime(clock)))
	require.NoError(t, err)
	defer p.Close()
	families, err = reg.Gather()
	require.NoError(t, err)
	var names []string
	for _, f := range families {
		names = append(names, f.GetName())
	}
	assert.Contains(t, names, "vk_static_pods_not_cleaned_up")
}
