package agent_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vk-static/vk-static/agent"
	"github.com/vk-static/vk-static/kubeclient/kubeclienttest"
	"github.com/vk-static/vk-static/node/api"
	"github.com/vk-static/vk-static/provider"
	"github.com/vk-static/vk-static/test/support/testenv"
)

// The agent serves the kubelet API and its Node advertises the port, so what kubectl logs asks
// the API server reaches a route of the agent: over TLS, authenticated by the API server's
// kubelet client certificate against the client CA, authorized by a SubjectAccessReview the
// agent makes with the node's own identity. (The API server proxies logs to a node at
// 127.0.0.1, but refuses nodes/proxy to a loopback address.)
func TestKubeletAPIThroughTheAPIServer(t *testing.T) {
	const name = "api-node"
	ctx := context.Background()
	_, client, verifyNoLeaks := env.LeakCheckedNodeClient(t, name, 10*time.Second)
	port, err := testenv.FreePort()
	require.NoError(t, err)

	a, err := agent.New(agent.Config{
		NodeName:    name,
		NewProvider: built(&loggingProvider{&instantProvider{pods: map[string]*corev1.Pod{}}}),
		Client:      kubeclienttest.Wrap(client),
		Node:        agent.NewNode(name, "127.0.0.1", nil), // the address the API server dials (InternalIP)
		API: &api.Config{
			Address: "127.0.0.1", Port: port, CertDirectory: t.TempDir(),
			ClientCAFile: env.CAFile, // the CA of the API server's kubelet client certificate
		},
	})
	require.NoError(t, err)
	runWithAPI(t, a, name, verifyNoLeaks)

	require.EventuallyWithT(t, func(c *assert.CollectT) {
		n, err := env.Admin.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		require.NoError(c, err)
		assert.Equal(c, int32(port), n.Status.DaemonEndpoints.KubeletEndpoint.Port) //nolint:gosec // a port
	}, 10*time.Second, 50*time.Millisecond, "the Node advertises the kubelet port")

	ns := env.Namespace(t)
	_, err = env.Admin.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec:       corev1.PodSpec{NodeName: name, Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	// The route finds the pod once the agent has it (404 until then).
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		logs, err := env.Admin.CoreV1().Pods(ns).GetLogs("web", &corev1.PodLogOptions{Container: "c"}).DoRaw(ctx)
		require.NoError(c, err, "%s", logs)
		assert.Equal(c, "logs of "+ns+"/web/c for kube-apiserver-kubelet-client", string(logs))
	}, 10*time.Second, 50*time.Millisecond)
}

// loggingProvider's logs say whose request reached them: the agent's log route passes the
// request's context, with the authenticated user, to the provider.
type loggingProvider struct{ *instantProvider }

func (p *loggingProvider) GetContainerLogs(ctx context.Context, namespace, podName, containerName string, _ provider.ContainerLogOpts) (io.ReadCloser, error) {
	u, _ := api.UserFrom(ctx)
	return io.NopCloser(strings.NewReader(fmt.Sprintf("logs of %s/%s/%s for %s", namespace, podName, containerName, u.GetName()))), nil
}

// runWithAPI runs a until the test ends — then it must stop cleanly, leaking nothing
// (verifyNoLeaks), and its Node name is deleted — and waits until its kubelet API listens.
func runWithAPI(t *testing.T, a *agent.Agent, name string, verifyNoLeaks func()) {
	t.Helper()
	runCtx, cancel := context.WithCancel(context.Background())
	go func() { _ = a.Run(runCtx) }()
	t.Cleanup(func() {
		cancel()
		<-a.Done()
		assert.NoError(t, a.Err())
		verifyNoLeaks()
		_ = env.Admin.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	select {
	case <-a.API().Ready():
	case <-a.Done():
		t.Fatalf("agent stopped: %v", a.Err())
	case <-time.After(10 * time.Second):
		t.Fatal("kubelet API not listening")
	}
}
