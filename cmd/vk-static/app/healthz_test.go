package app

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vk-static/vk-static/node/api/localadmin"
	"github.com/vk-static/vk-static/test/support/testenv"
)

// getBody is the status and body of GET url with c.
func getBody(t *testing.T, c *http.Client, url string) (int, string) {
	t.Helper()
	resp, err := c.Get(url)
	require.NoError(t, err, url)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err, url)
	return resp.StatusCode, string(body)
}

// With --profiling, /debug/pprof is on the kubelet API, behind its authentication and
// authorization — standalone, for the local administrator only — and not on the healthz port,
// which is plain HTTP that every local user and host-network pod reaches: there,
// /debug/pprof/cmdline would give away the command line and a profile the agent's memory.
func TestProfilingIsOnTheKubeletAPIOnly(t *testing.T) {
	healthzPort, err := testenv.FreePort()
	require.NoError(t, err)
	apiPort, err := testenv.FreePort()
	require.NoError(t, err)
	root := t.TempDir()
	o, err := parse(t, "--provider", "mock", "--hostname-override", "node-a", "--root-dir", root, "--memory-limit", "none",
		"--healthz-port", strconv.Itoa(healthzPort), "--address", "127.0.0.1", "--port", strconv.Itoa(apiPort), "--profiling")
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runAgent(ctx, o) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			assert.NoError(t, err)
		case <-time.After(30 * time.Second):
			t.Error("the agent did not stop")
		}
	})

	healthz := "http://127.0.0.1:" + strconv.Itoa(healthzPort)
	plain := &http.Client{Timeout: 10 * time.Second}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		resp, err := plain.Get(healthz + "/healthz")
		if assert.NoError(c, err) {
			resp.Body.Close()
			assert.Equal(c, http.StatusOK, resp.StatusCode)
		}
	}, 20*time.Second, 20*time.Millisecond, "healthz serves")
	for _, path := range []string{"/debug/pprof/cmdline", "/debug/pprof/", "/debug/pprof/heap"} {
		code, _ := getBody(t, plain, healthz+path)
		assert.Equal(t, http.StatusNotFound, code, "healthz %s", path)
	}

	pki := filepath.Join(root, "pki")
	var cred *localadmin.Credential
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		cred, err = localadmin.ReadCredential(pki)
		assert.NoError(c, err)
	}, 20*time.Second, 20*time.Millisecond, "the kubelet API serves")
	adminTransport := &http.Transport{TLSClientConfig: cred.TLSConfig()}
	t.Cleanup(adminTransport.CloseIdleConnections)
	admin := &http.Client{Transport: adminTransport, Timeout: 10 * time.Second}
	code, body := getBody(t, admin, cred.Server+"/debug/pprof/cmdline")
	assert.Equal(t, http.StatusOK, code, body)
	assert.Equal(t, strings.Join(os.Args, "\x00"), body)

	nobodyTransport := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // what is served is not the point
	t.Cleanup(nobodyTransport.CloseIdleConnections)
	nobody := &http.Client{Transport: nobodyTransport, Timeout: 10 * time.Second}
	code, body = getBody(t, nobody, cred.Server+"/debug/pprof/cmdline")
	assert.Equal(t, http.StatusUnauthorized, code, body)
}

// --profiling reaches the kubelet API's configuration, whose server serves /debug/pprof
// (node/api's TestProfiling).
func TestProfilingFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{{nil, false}, {[]string{"--profiling"}, true}} {
		o, err := parse(t, append([]string{"--kubeconfig", "/k"}, tc.args...)...)
		require.NoError(t, err)
		c, why := o.kubeletAPI()
		require.Empty(t, why)
		assert.Equal(t, tc.want, c.Profiling, tc.args)
	}
	cfg := writeFile(t, "c.yaml", "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nenableProfilingHandler: true\n")
	o, err := parse(t, "--config", cfg)
	require.NoError(t, err)
	c, _ := o.kubeletAPI()
	assert.True(t, c.Profiling, "enableProfilingHandler")
}
