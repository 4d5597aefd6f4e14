package integration

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vk-static/vk-static/node/api"
)

// /configz is authorized as nodes/configz (the kubelet's fine-grained subresource) or, as for
// every path, nodes/proxy: no credentials 401, a user with neither 403, nodes/configz alone
// 200 — and it opens nothing else.
func TestConfigzAuthorization(t *testing.T) {
	ns := env.Namespace(t)
	s := serve(t, "node-c", func(c *api.Config) {
		c.Configz = map[string]any{"kind": "KubeletConfiguration", "port": 10250}
	})

	code, body := newCaller(t, "").do(t, s, "GET", "/configz")
	assert.Equal(t, http.StatusUnauthorized, code, body)

	nobody := newCaller(t, serviceAccountToken(t, ns, "nobody"))
	code, body = nobody.do(t, s, "GET", "/configz")
	assert.Equal(t, http.StatusForbidden, code, body)
	assert.Contains(t, body, "subresource(s)=[configz proxy]")

	grant(t, serviceAccount(ns, "configreader"), "configz", "get")
	reader := newCaller(t, serviceAccountToken(t, ns, "configreader"))
	code, body = reader.do(t, s, "GET", "/configz")
	require.Equal(t, http.StatusOK, code, body)
	var got map[string]map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &got), body)
	assert.Equal(t, map[string]any{"kind": "KubeletConfiguration", "port": float64(10250)}, got["kubeletconfig"])

	code, body = reader.do(t, s, "GET", "/whoami")
	assert.Equal(t, http.StatusForbidden, code, "nodes/configz is for /configz only: %s", body)
}
