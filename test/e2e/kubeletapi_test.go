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
)

// The built agent serves the kubelet API on --port over TLS and the API server gets through: a
// kubectl logs request reaches the agent, authenticated by the API server's kubelet client
// certificate (--client-ca-file) and authorized by a SubjectAccessReview the agent makes with
// the node's identity, while a request with no credentials is turned away. Until the kubelet's
// routes exist the agent answers the API server 404 (authorized, nothing there); a 401 or 403
// would mean the API server was refused.
func TestKubeletAPIAnswersTheAPIServer(t *testing.T) {
	a := startAgent(t, agentOptions{})
	ctx := context.Background()
	ns := env.Namespace(t)
	_, err := env.Admin.CoreV1().Pods(ns).Create(ctx, apiPod("web", a.Node), metav1.CreateOptions{})
	require.NoError(t, err)

	logs, err := env.Admin.CoreV1().Pods(ns).GetLogs("web", &corev1.PodLogOptions{Container: "main"}).DoRaw(ctx)
	if err != nil {
		require.True(t, apierrors.IsNotFound(err), "the agent refused the API server: %v (%s)", err, logs)
		// The agent's 404, passed on by the API server for pods/log (a missing pod would be
		// NotFound for pods).
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
