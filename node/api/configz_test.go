package api

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// GET /configz answers the configuration under "kubeletconfig", as JSON, as the kubelet does;
// other methods are 405, and without a Configz there is no route.
func TestConfigz(t *testing.T) {
	type config struct {
		Kind string `json:"kind"`
		Port int    `json:"port"`
	}
	s := serve(t, Config{Anonymous: true, AuthorizationMode: AuthorizationModeAlwaysAllow,
		Configz: config{Kind: "KubeletConfiguration", Port: 10250}})
	c := client(t)

	code, body, resp := get(t, c, s, "/configz")
	require.Equal(t, http.StatusOK, code, body)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	assert.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"))
	var got map[string]config
	require.NoError(t, json.Unmarshal([]byte(body), &got), body)
	assert.Equal(t, map[string]config{"kubeletconfig": {Kind: "KubeletConfiguration", Port: 10250}}, got)

	resp, err := c.Post("https://"+s.Addr()+"/configz", "application/json", strings.NewReader("{}"))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)

	without := serve(t, Config{Anonymous: true, AuthorizationMode: AuthorizationModeAlwaysAllow})
	code, _, _ = get(t, c, without, "/configz")
	assert.Equal(t, http.StatusNotFound, code)
}

// A configuration that cannot be encoded fails New, not every request.
func TestConfigzMustEncode(t *testing.T) {
	_, err := New(Config{NodeName: "node-a", CertDirectory: t.TempDir(), Anonymous: true,
		AuthorizationMode: AuthorizationModeAlwaysAllow, Configz: make(chan int)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Config.Configz")
}
