package agent_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/agent"
	"github.com/vk-static/vk-static/sources"
)

// slowSource is a part of the agent that outlives the provider's Run: once its context ends it
// waits for the provider's Run to return before it stops, as the kubelet API or the pod
// controller may still call the provider after that.
type slowSource struct {
	providerStopped <-chan struct{}
	running         chan struct{} // closed when Run starts
	stopped         atomic.Bool
}

func (s *slowSource) Name() string { return "slow" }

func (s *slowSource) Run(ctx context.Context, _ chan<- sources.Snapshot) {
	close(s.running)
	<-ctx.Done()
	<-s.providerStopped
	s.stopped.Store(true)
}

// closeRecorder is a provider with work of its own whose Close records whether, by then, its Run
// and the slow part had returned.
type closeRecorder struct {
	*workingProvider
	source *slowSource

	closes                      atomic.Int32
	runReturned, sourceReturned atomic.Bool
}

func (p *closeRecorder) Close() error {
	if p.closes.Add(1) == 1 {
		select {
		case <-p.stopped:
			p.runReturned.Store(true)
		default:
		}
		p.sourceReturned.Store(p.source.stopped.Load())
	}
	return nil
}

// The agent closes the provider it built once, after every part of Run has stopped — not when
// the provider's own Run returns, which may come first while the others still call into it.
func TestRunClosesTheProviderAfterEveryPart(t *testing.T) {
	wp := &workingProvider{instantProvider: &instantProvider{pods: map[string]*corev1.Pod{}}, running: make(chan struct{}), stopped: make(chan struct{})}
	src := &slowSource{providerStopped: wp.stopped, running: make(chan struct{})}
	p := &closeRecorder{workingProvider: wp, source: src}
	a, err := agent.New(agent.Config{NodeName: "node-a", NewProvider: built(p), Sources: []sources.Source{src}})
	require.NoError(t, err)
	assert.Zero(t, p.closes.Load(), "New closes nothing it returns")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = a.Run(ctx) }()
	for _, running := range []<-chan struct{}{wp.running, src.running} {
		select {
		case <-running:
		case <-time.After(10 * time.Second):
			t.Fatal("the agent's parts were not run")
		}
	}
	assert.Zero(t, p.closes.Load(), "not closed while running")
	cancel()
	<-a.Done()
	require.NoError(t, a.Err())
	assert.Equal(t, int32(1), p.closes.Load(), "closed once")
	assert.True(t, p.runReturned.Load(), "closed after the provider's Run returned")
	assert.True(t, p.sourceReturned.Load(), "closed after the agent's other parts stopped")
}
