package e2e

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// The built agent serves the kubelet API on --port over TLS, its Node advertises that port, and
// the API server gets through: a kubectl logs request reaches the agent, authenticated by the
// API server's kubelet client certificate (--client-ca-file) and authorized by a
// SubjectAccessReview the agent makes with the node's identity, while a request with no
// credentials is turned away. The answer is the log route's — the logs, or its 404 while the
// agent does not hold the pod yet; a 401 or 403 would mean the API server was refused.
func TestKubeletAPIAnswersTheAPIServer(t *testing.T) {
	a := startAgent(t, agentOptions{})
	ctx := context.Background()
	ns := env.Namespace(t)
	_, err := env.Admin.CoreV1().Pods(ns).Create(ctx, apiPod("web", a.Node), metav1.CreateOptions{})
	require.NoError(t, err)
	// /readyz can answer before the Node is registered, and without the Node the API server
	// cannot find the agent (its 404 would be for the node, named as the request's pods).
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		n, err := env.Admin.CoreV1().Nodes().Get(ctx, a.Node, metav1.GetOptions{})
		require.NoError(c, err)
		assert.Equal(c, a.APIPort, int(n.Status.DaemonEndpoints.KubeletEndpoint.Port))
	}, 10*time.Second, 50*time.Millisecond, "the Node advertises --port")
	// Asked before the provider runs the pod, the agent answers that it has no such pod, which
	// the API server passes on as it pleases; once Running, the answer is the agent's own.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		p, err := env.Admin.CoreV1().Pods(ns).Get(ctx, "web", metav1.GetOptions{})
		require.NoError(c, err)
		assert.Equal(c, corev1.PodRunning, p.Status.Phase)
	}, 30*time.Second, 50*time.Millisecond, "the pod runs")

	logs, err := env.Admin.CoreV1().Pods(ns).GetLogs("web", &corev1.PodLogOptions{Container: "main"}).DoRaw(ctx)
	if err != nil {
		require.True(t, apierrors.IsNotFound(err), "the agent refused the API server: %v (%s)", err, logs)
		// The agent's 404, passed on by the API server for pods/log.
		var status metav1.Status
		require.NoError(t, json.Unmarshal(logs, &status), "%s", logs)
		require.NotNil(t, status.Details, "%s", logs)
		assert.Equal(t, "pods/log", status.Details.Kind, "%s", logs)
	}

	client := &http.Client{
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // self-signed, and only the answer matters
		Timeout:   10 * time.Second,
	}
	defer client.CloseIdleConnections()
	resp, err := client.Get("https://127.0.0.1:" + strconv.Itoa(a.APIPort) + "/pods")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "%s", body)
}

// kubectl logs shows the mock's lifecycle lines of an API pod and, by its mirror's name, of a
// static pod; the agent's Summary lists both pods.
func TestKubeletAPIServesLogsAndStats(t *testing.T) {
	a := startAgent(t, agentOptions{})
	ctx := context.Background()
	ns := env.Namespace(t)
	_, err := env.Admin.CoreV1().Pods(ns).Create(ctx, apiPod("web", a.Node), metav1.CreateOptions{})
	require.NoError(t, err)
	a.WriteManifest("static.yaml", manifest("static", "nginx:1"))
	mirror := a.runningMirror("static", "nginx:1")

	for _, p := range []struct{ namespace, name string }{{ns, "web"}, {mirror.Namespace, mirror.Name}} {
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			logs, err := env.Admin.CoreV1().Pods(p.namespace).GetLogs(p.name, &corev1.PodLogOptions{Container: "main"}).DoRaw(ctx)
			require.NoError(c, err, "%s", logs)
			assert.Equal(c, "mock: created container main (image nginx:1)\nmock: started container main\n", string(logs))
		}, 10*time.Second, 50*time.Millisecond, "logs of %s/%s", p.namespace, p.name)
	}

	// The Summary straight from the agent, as metrics-server reads it: the API server's
	// nodes/proxy refuses a node at a loopback address ("address not allowed"). A client
	// certificate of the cluster CA authenticates, and the agent's SubjectAccessReview allows
	// system:masters.
	summary, raw := a.statsSummary(t)
	assert.Equal(t, a.Node, summary.Node.NodeName)
	pods := map[string]bool{}
	for _, p := range summary.Pods {
		pods[p.PodRef.Namespace+"/"+p.PodRef.Name] = true
	}
	assert.Equal(t, map[string]bool{ns + "/web": true, mirror.Namespace + "/" + mirror.Name: true}, pods, "%s", raw)
}

// statsSummary is the agent's /stats/summary read straight from it with a client certificate
// of the cluster CA for system:masters (the agent's SubjectAccessReview allows it), and the
// raw answer for messages.
func (a *agent) statsSummary(c require.TestingT) (statsv1alpha1.Summary, []byte) {
	var summary statsv1alpha1.Summary
	certPEM, keyPEM, err := env.IssueClientCert("e2e-metrics", "system:masters")
	require.NoError(c, err)
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	require.NoError(c, err)
	client := &http.Client{
		Transport: &http.Transport{TLSClientConfig: &tls.Config{
			Certificates:       []tls.Certificate{cert},
			InsecureSkipVerify: true, //nolint:gosec // the agent's self-signed certificate; only the answer matters
		}},
		Timeout: 10 * time.Second,
	}
	defer client.CloseIdleConnections()
	resp, err := client.Get("https://127.0.0.1:" + strconv.Itoa(a.APIPort) + "/stats/summary")
	require.NoError(c, err)
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(c, err)
	require.Equal(c, http.StatusOK, resp.StatusCode, "%s", raw)
	require.NoError(c, json.Unmarshal(raw, &summary), "%s", raw)
	return summary, raw
}
