package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/client-go/kubernetes"

	"github.com/vk-static/vk-static/test/support/agentproc"
	"github.com/vk-static/vk-static/test/support/testenv"
)

// agent is one vk-static process for one test, with the test's own node name.
type agent struct {
	*agentproc.Agent
	t      *testing.T
	Client kubernetes.Interface // the node's own identity (nil standalone)
}

type agentOptions struct {
	standalone bool
	extraArgs  []string
	node       string       // default: named after the test
	env        *testenv.Env // default: the package's
	apiHost    string       // the API server's URL for the agent, when not env's (a proxy)
}

// startAgent runs vk-static for a node named after the test, waits until it is ready, and
// stops it when the test ends (agentproc.StartInTest); on failure its log is printed.
func startAgent(t *testing.T, opts agentOptions) *agent {
	t.Helper()
	if opts.node == "" {
		opts.node = agentproc.NodeName(t)
	}
	cfg := agentproc.Config{
		Binary:  agentBinary,
		Dir:     t.TempDir(),
		Node:    opts.node,
		APIHost: opts.apiHost,
		Args: append([]string{
			"--file-check-frequency", "1h", // changes must be seen through fsnotify
			"--node-status-update-frequency", "2s",
			"--node-lease-duration-seconds", "4",
			"--kube-api-qps", "-1",
			"-v", "4",
		}, opts.extraArgs...),
	}
	if opts.env == nil {
		opts.env = env
	}
	if !opts.standalone {
		cfg.Env = opts.env
	}
	a := &agent{Agent: agentproc.StartInTest(t, cfg), t: t}
	if !opts.standalone {
		a.Client = opts.env.NodeClient(t, a.Node)
	}
	return a
}

// Stop stops the agent; an unclean exit or a data race fails the test.
func (a *agent) Stop() { a.t.Helper(); a.StopInTest(a.t) }

// restart stops the agent and starts it again with the same flags and directories.
func (a *agent) restart() {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := a.Restart(ctx, 20*time.Second); err != nil {
		a.t.Fatal(err)
	}
}

// metric returns the sum of the samples of one of the agent's metrics whose labels include
// the given name=value pairs. A failed scrape fails t: the test, or within a
// require.EventuallyWithT condition its *assert.CollectT, which ends that try.
func (a *agent) metric(t require.TestingT, name string, labels ...string) float64 {
	if h, ok := t.(interface{ Helper() }); ok {
		h.Helper()
	}
	want := map[string]string{}
	for _, l := range labels {
		k, v, _ := strings.Cut(l, "=")
		want[k] = strings.Trim(v, `"`)
	}
	v, err := a.Metric(context.Background(), name, want)
	require.NoError(t, err)
	return v
}

// WriteManifest writes a manifest atomically (write + rename), as config management does.
func (a *agent) WriteManifest(name, content string) {
	a.t.Helper()
	if err := a.Agent.WriteManifest(name, []byte(content)); err != nil {
		a.t.Fatal(err)
	}
}

func (a *agent) RemoveManifest(name string) {
	a.t.Helper()
	if err := a.Agent.RemoveManifest(name); err != nil {
		a.t.Fatal(err)
	}
}
