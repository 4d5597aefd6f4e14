package e2e

import (
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// The built agent's /configz is the configuration it runs with — its flags, as a
// KubeletConfiguration under "kubeletconfig" — for a caller the API server allows (here a
// client certificate of the cluster CA in system:masters; the API server's own nodes/proxy
// refuses a node at a loopback address).
func TestConfigzOfTheRunningAgent(t *testing.T) {
	a := startAgent(t, agentOptions{extraArgs: []string{"--streaming-connection-idle-timeout", "7m", "--max-pods", "42"}})
	certPEM, keyPEM, err := env.IssueClientCert("e2e-configz", "system:masters")
	require.NoError(t, err)
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	require.NoError(t, err)
	tr := &http.Transport{TLSClientConfig: &tls.Config{
		Certificates:       []tls.Certificate{cert},
		InsecureSkipVerify: true, //nolint:gosec // the agent's self-signed certificate; only the answer matters
	}}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Get("https://127.0.0.1:" + strconv.Itoa(a.APIPort) + "/configz")
	require.NoError(t, err)
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)

	var got struct {
		KubeletConfig kubeletv1beta1.KubeletConfiguration `json:"kubeletconfig"`
	}
	require.NoError(t, json.Unmarshal(raw, &got), "%s", raw)
	c := got.KubeletConfig
	assert.Equal(t, "KubeletConfiguration", c.Kind)
	assert.Equal(t, "127.0.0.1", c.Address)
	assert.Equal(t, int32(a.APIPort), c.Port)
	assert.Equal(t, a.ManifestDir, c.StaticPodPath)
	assert.Equal(t, int32(42), c.MaxPods)
	assert.Equal(t, 7*time.Minute, c.StreamingConnectionIdleTimeout.Duration)
	assert.Equal(t, env.CAFile, c.Authentication.X509.ClientCAFile)
	assert.Equal(t, kubeletv1beta1.KubeletAuthorizationModeWebhook, c.Authorization.Mode)
}
