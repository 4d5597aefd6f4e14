package lifecycle

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"

	"github.com/vk-static/vk-static/agent"
)

// runtimeWork is a runtime's own work: it runs until its context ends.
type runtimeWork struct{ running, stopped chan struct{} }

func (w runtimeWork) Run(ctx context.Context) error {
	close(w.running)
	<-ctx.Done()
	close(w.stopped)
	return nil
}

// NewProvider takes what the agent gives (node IPs, recorder, registerer), fills in the Node's
// nodeInfo, and its provider runs the runtime's work beside the pods until ctx ends.
func TestNewProvider(t *testing.T) {
	work := runtimeWork{running: make(chan struct{}), stopped: make(chan struct{})}
	recorder := record.NewFakeRecorder(10)
	node := agent.NewNode("node-a", "10.0.0.7", nil)
	built, err := NewProvider(context.Background(), Config{
		Runtime: newFakeRuntime(clock.RealClock{}), RuntimeName: "fake", RootDir: t.TempDir(),
		RuntimeWork: []agent.Component{work},
	})(agent.ProviderConfig{NodeName: "node-a", Node: node, NodeIPs: []string{"10.0.0.7"}, Recorder: recorder, Registerer: prometheus.NewRegistry()})
	require.NoError(t, err)

	p, ok := built.(*withRuntimeWork)
	require.True(t, ok, "a provider with runtime work: %T", built)
	assert.Equal(t, []string{"10.0.0.7"}, p.cfg.NodeIPs)
	assert.Same(t, recorder, p.cfg.Recorder)
	assert.Nil(t, p.cfg.Services, "standalone: no Services, not a nil watch")
	assert.Equal(t, "fake://", node.Status.NodeInfo.ContainerRuntimeVersion[:len("fake://")])

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	select {
	case <-work.running:
	case <-time.After(10 * time.Second):
		t.Fatal("the runtime's work was not run")
	}
	cancel()
	require.NoError(t, <-done)
	select {
	case <-work.stopped:
	default:
		t.Error("Run returned before the runtime's work stopped")
	}
}
