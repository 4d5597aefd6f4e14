package agent_test

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/vk-static/vk-static/agent"
	"github.com/vk-static/vk-static/kubeclient/kubeclienttest"
	"github.com/vk-static/vk-static/node/api"
	"github.com/vk-static/vk-static/test/support/testenv"
)

// An agent that is built and never run has started nothing: its parts, the pod controller's work
// queues included, start in Run.
func TestNewStartsNothing(t *testing.T) {
	baseline := goleak.IgnoreCurrent()
	port, err := testenv.FreePort()
	require.NoError(t, err)
	a, err := agent.New(agent.Config{
		NodeName:        "idle",
		NewProvider:     built(&instantProvider{pods: map[string]*corev1.Pod{}}),
		Client:          kubeclienttest.Wrap(fake.NewClientset()),
		PodManifestPath: t.TempDir(),
		ManifestURL:     "http://127.0.0.1:1/pods.yaml",
		API:             &api.Config{Address: "127.0.0.1", Port: port, CertDirectory: t.TempDir(), ClientCAFile: env.CAFile},
	})
	require.NoError(t, err)
	require.NotNil(t, a.Provider())
	goleak.VerifyNone(t, baseline)
}

// workingProvider is a provider with work of its own, which the agent runs.
type workingProvider struct {
	*instantProvider
	running chan struct{} // closed when Run starts
	stopped chan struct{} // closed when Run returns
}

func (p *workingProvider) Run(ctx context.Context) error {
	close(p.running)
	<-ctx.Done()
	close(p.stopped)
	return nil
}

// The factory gets the node-scoped parts and completes the Node the agent registers; the
// provider's own work runs from the agent's Run until its context ends.
func TestProviderFactory(t *testing.T) {
	client := fake.NewClientset()
	p := &workingProvider{instantProvider: &instantProvider{pods: map[string]*corev1.Pod{}}, running: make(chan struct{}), stopped: make(chan struct{})}
	var got agent.ProviderConfig
	a, err := agent.New(agent.Config{
		NodeName: "node-a",
		Node:     agent.NewNode("node-a", "10.0.0.7", nil),
		Client:   kubeclienttest.Wrap(client),
		NewProvider: func(pc agent.ProviderConfig) (agent.Provider, error) {
			got = pc
			pc.Node.Labels["provider"] = "working"
			return p, nil
		},
	})
	require.NoError(t, err)
	assert.Equal(t, "node-a", got.NodeName)
	assert.Equal(t, []string{"10.0.0.7"}, got.NodeIPs)
	assert.NotNil(t, got.Recorder)
	assert.NotNil(t, got.Registerer)
	assert.NotNil(t, got.Objects)
	assert.NotNil(t, got.Services)
	assert.NotNil(t, got.Tokens)
	assert.Same(t, p, a.Provider())

	ctx, cancel := context.WithCancel(context.Background())
	go func() { _ = a.Run(ctx) }()
	select {
	case <-p.running:
	case <-time.After(10 * time.Second):
		t.Fatal("the provider's Run was not called")
	}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		n, err := client.CoreV1().Nodes().Get(ctx, "node-a", metav1.GetOptions{})
		if assert.NoError(c, err) {
			assert.Equal(c, "working", n.Labels["provider"])
		}
	}, 10*time.Second, 10*time.Millisecond, "the Node as the provider completed it")
	cancel()
	<-a.Done()
	assert.NoError(t, a.Err())
	select {
	case <-p.stopped:
	default:
		t.Error("the agent returned before the provider's Run")
	}
}

// Standalone, the factory gets no getters, and a recorder all the same.
func TestProviderFactoryStandalone(t *testing.T) {
	var got agent.ProviderConfig
	_, err := agent.New(agent.Config{
		NodeName: "node-a",
		NewProvider: func(pc agent.ProviderConfig) (agent.Provider, error) {
			got = pc
			return &instantProvider{pods: map[string]*corev1.Pod{}}, nil
		},
	})
	require.NoError(t, err)
	assert.NotNil(t, got.Recorder)
	assert.Nil(t, got.Objects)
	assert.Nil(t, got.Services)
	assert.Nil(t, got.Tokens)
}

// closingProvider counts its Close calls.
type closingProvider struct {
	*instantProvider
	closed atomic.Int32
}

func (p *closingProvider) Close() error {
	p.closed.Add(1)
	return nil
}

// A provider New built is closed when New fails after all (here: the kubelet API's certificate
// cannot be read), since no Run will release what it holds; one New returns is not.
func TestNewClosesTheProviderItFailsAfter(t *testing.T) {
	for _, tc := range []struct {
		name       string
		certFile   string
		wantClosed int32
	}{
		{name: "New fails", certFile: filepath.Join(t.TempDir(), "missing.crt"), wantClosed: 1},
		{name: "New succeeds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &closingProvider{instantProvider: &instantProvider{pods: map[string]*corev1.Pod{}}}
			apiCfg := &api.Config{Address: "127.0.0.1", Port: 10250, CertDirectory: t.TempDir(), ClientCAFile: env.CAFile}
			if tc.certFile != "" {
				apiCfg.TLSCertFile, apiCfg.TLSPrivateKeyFile = tc.certFile, tc.certFile
			}
			a, err := agent.New(agent.Config{NodeName: "node-a", NewProvider: built(p), Client: kubeclienttest.Wrap(fake.NewClientset()), API: apiCfg})
			if tc.wantClosed > 0 {
				require.Error(t, err)
				assert.Nil(t, a)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tc.wantClosed, p.closed.Load())
		})
	}
}
