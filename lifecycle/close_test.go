package lifecycle

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"

	"github.com/vk-static/vk-static/agent"
	"github.com/vk-static/vk-static/node/api"
)

// Close holds nothing to give back: the fake runtime is memory.
func (f *fakeRuntime) Close() error { return nil }

// closingRuntime is a fake runtime that counts its Close calls and answers them with err.
type closingRuntime struct {
	*fakeRuntime
	closes atomic.Int32
	err    error
}

func (r *closingRuntime) Close() error {
	r.closes.Add(1)
	return r.err
}

func newClosingRuntime() *closingRuntime {
	return &closingRuntime{fakeRuntime: newFakeRuntime(clock.RealClock{}), err: errors.New("closed")}
}

// runUntilCancelled runs p until the returned stop is called, which returns Run's error.
func runUntilCancelled(p interface{ Run(context.Context) error }) (stop func() error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	return func() error {
		cancel()
		return <-done
	}
}

// The runtime is closed exactly once, by the provider's Close, whether it ran or not and
// however many times it is closed; Run leaves it open (the builder closes the provider once
// every other user has stopped); Close answers the runtime's error each time, and a Run after
// Close fails without touching the runtime.
func TestProviderClosesItsRuntimeOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  bool
	}{
		{name: "built and never run"},
		{name: "run then stopped", run: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := newClosingRuntime()
			p, err := New(context.Background(), Config{Runtime: rt, RuntimeName: "fake", RootDir: t.TempDir()})
			require.NoError(t, err)
			assert.Zero(t, rt.closes.Load(), "New closes nothing it returns")
			if tc.run {
				require.NoError(t, runUntilCancelled(p)())
				assert.Zero(t, rt.closes.Load(), "Run's end leaves the runtime open: Close closes it")
			}
			assert.ErrorIs(t, p.Close(), rt.err)
			assert.Equal(t, int32(1), rt.closes.Load(), "Close closes the runtime")
			assert.ErrorIs(t, p.Close(), rt.err, "the first error, again")
			assert.Equal(t, int32(1), rt.closes.Load(), "closed once")

			err = p.Run(context.Background())
			assert.ErrorContains(t, err, "Run after Close")
			assert.Equal(t, int32(1), rt.closes.Load())
		})
	}
}

// New takes the runtime from its call on: when it fails, the runtime is closed, as no Close
// can be.
func TestNewClosesTheRuntimeWhenItFails(t *testing.T) {
	rt := newClosingRuntime()
	_, err := New(context.Background(), Config{Runtime: rt, RuntimeName: "fake"}) // no RootDir
	require.Error(t, err)
	assert.Equal(t, int32(1), rt.closes.Load())
}

// closeWatch is runtime work that records, when it stops, whether the runtime was closed by
// then; running is closed when it starts.
type closeWatch struct {
	rt              *closingRuntime
	running         chan struct{}
	closedAtItsStop atomic.Int32
}

func (w *closeWatch) Run(ctx context.Context) error {
	close(w.running)
	<-ctx.Done()
	w.closedAtItsStop.Store(w.rt.closes.Load())
	return nil
}

// The provider NewProvider builds with runtime work leaves the runtime open when its Run
// returns; its Close closes it, once, and only once that work has stopped (it uses the runtime
// too): a Close during Run stops the work first. A Run after Close fails.
func TestNewProviderClosesTheRuntimeAfterItsWork(t *testing.T) {
	build := func(t *testing.T) (agent.Provider, *closingRuntime, *closeWatch) {
		rt := newClosingRuntime()
		work := &closeWatch{rt: rt, running: make(chan struct{})}
		p, err := NewProvider(context.Background(), Config{
			Runtime: rt, RuntimeName: "fake", RootDir: t.TempDir(), RuntimeWork: []agent.Component{work},
		})(agent.ProviderConfig{NodeName: "node-a", Node: agent.NewNode("node-a", "10.0.0.7", nil), Recorder: record.NewFakeRecorder(10), Registerer: prometheus.NewRegistry()})
		require.NoError(t, err)
		return p, rt, work
	}
	runAfterClose := func(t *testing.T, p agent.Provider, rt *closingRuntime) {
		t.Helper()
		assert.ErrorContains(t, p.(agent.Component).Run(context.Background()), "Run after Close")
		assert.Equal(t, int32(1), rt.closes.Load())
	}

	t.Run("run then stopped", func(t *testing.T) {
		p, rt, work := build(t)
		require.NoError(t, runUntilCancelled(p.(agent.Component))())
		assert.Zero(t, work.closedAtItsStop.Load(), "the runtime was open while its work ran")
		assert.Zero(t, rt.closes.Load(), "Run's end leaves the runtime open: Close closes it")
		assert.ErrorIs(t, p.(io.Closer).Close(), rt.err)
		assert.Equal(t, int32(1), rt.closes.Load())
		assert.ErrorIs(t, p.(io.Closer).Close(), rt.err, "the first error, again")
		assert.Equal(t, int32(1), rt.closes.Load(), "closed once")
		runAfterClose(t, p, rt)
	})
	t.Run("closed while running", func(t *testing.T) {
		p, rt, work := build(t)
		done := make(chan error, 1)
		go func() { done <- p.(agent.Component).Run(context.Background()) }()
		<-work.running
		assert.ErrorIs(t, p.(io.Closer).Close(), rt.err)
		require.NoError(t, <-done, "Close stopped Run")
		assert.Zero(t, work.closedAtItsStop.Load(), "the work stopped before the runtime closed")
		assert.Equal(t, int32(1), rt.closes.Load())
		runAfterClose(t, p, rt)
	})
	t.Run("built and never run", func(t *testing.T) {
		p, rt, _ := build(t)
		c, ok := p.(io.Closer)
		require.True(t, ok, "%T is an io.Closer, which the agent closes", p)
		assert.ErrorIs(t, c.Close(), rt.err)
		assert.ErrorIs(t, c.Close(), rt.err)
		assert.Equal(t, int32(1), rt.closes.Load(), "closed once")
		runAfterClose(t, p, rt)
	})
}

// agent.New, failing after it built the lifecycle (the kubelet API's certificate cannot be
// read), closes the provider and so its runtime: nothing else would.
func TestAgentNewFailingClosesTheRuntime(t *testing.T) {
	rt := newClosingRuntime()
	missing := filepath.Join(t.TempDir(), "missing.crt")
	a, err := agent.New(agent.Config{
		NodeName: "node-a", PodManifestPath: t.TempDir(),
		NewProvider: NewProvider(context.Background(), Config{Runtime: rt, RuntimeName: "fake", RootDir: t.TempDir()}),
		API:         &api.Config{Address: "127.0.0.1", Port: 10250, CertDirectory: t.TempDir(), TLSCertFile: missing, TLSPrivateKeyFile: missing},
	})
	require.Error(t, err)
	assert.Nil(t, a)
	assert.Equal(t, int32(1), rt.closes.Load())
}

// agent.Run closes the lifecycle it built, and so its runtime, once, after every part stopped;
// the lifecycle's own Run leaves it open.
func TestAgentRunClosesTheRuntimeOnce(t *testing.T) {
	rt := newClosingRuntime()
	a, err := agent.New(agent.Config{
		NodeName: "node-a", PodManifestPath: t.TempDir(),
		NewProvider: NewProvider(context.Background(), Config{Runtime: rt, RuntimeName: "fake", RootDir: t.TempDir()}),
	})
	require.NoError(t, err)
	assert.ErrorIs(t, runUntilCancelled(a)(), rt.err, "the runtime's Close error is Run's")
	assert.Equal(t, int32(1), rt.closes.Load(), "closed once")
}
