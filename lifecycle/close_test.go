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

// The runtime is closed exactly once, by the provider, whether it ran or not and however many
// times it is closed; Close answers the runtime's error each time, and a Run after Close fails
// without touching the runtime.
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
				assert.ErrorIs(t, runUntilCancelled(p)(), rt.err, "Run's end closes, with the runtime's error")
				assert.Equal(t, int32(1), rt.closes.Load(), "Run's end closes the runtime")
			}
			assert.ErrorIs(t, p.Close(), rt.err)
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

// closeWatch is runtime work that records, when it stops, whether the runtime was closed by then.
type closeWatch struct {
	rt              *closingRuntime
	closedAtItsStop atomic.Int32
}

func (w *closeWatch) Run(ctx context.Context) error {
	<-ctx.Done()
	w.closedAtItsStop.Store(w.rt.closes.Load())
	return nil
}

// The provider NewProvider builds with runtime work closes the runtime once that work has
// stopped (it uses the runtime too), once; closing it never run closes it too.
func TestNewProviderClosesTheRuntimeAfterItsWork(t *testing.T) {
	build := func(t *testing.T) (agent.Provider, *closingRuntime, *closeWatch) {
		rt := newClosingRuntime()
		work := &closeWatch{rt: rt}
		p, err := NewProvider(context.Background(), Config{
			Runtime: rt, RuntimeName: "fake", RootDir: t.TempDir(), RuntimeWork: []agent.Component{work},
		})(agent.ProviderConfig{NodeName: "node-a", Node: agent.NewNode("node-a", "10.0.0.7", nil), Recorder: record.NewFakeRecorder(10), Registerer: prometheus.NewRegistry()})
		require.NoError(t, err)
		return p, rt, work
	}

	t.Run("run then stopped", func(t *testing.T) {
		p, rt, work := build(t)
		assert.ErrorIs(t, runUntilCancelled(p.(agent.Component))(), rt.err)
		assert.Zero(t, work.closedAtItsStop.Load(), "the runtime was open while its work ran")
		assert.Equal(t, int32(1), rt.closes.Load())
		assert.ErrorIs(t, p.(io.Closer).Close(), rt.err)
		assert.Equal(t, int32(1), rt.closes.Load(), "closed once")
	})
	t.Run("built and never run", func(t *testing.T) {
		p, rt, _ := build(t)
		c, ok := p.(io.Closer)
		require.True(t, ok, "%T is an io.Closer, which agent.New closes when it fails", p)
		assert.ErrorIs(t, c.Close(), rt.err)
		assert.ErrorIs(t, c.Close(), rt.err)
		assert.Equal(t, int32(1), rt.closes.Load())
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
