package api

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vk-static/vk-static/podutil"
)

// attach connects to the provider's process (the mock's echoes its input and says so on
// stderr) and ends with the client's input; bad requests are refused before any stream opens.
func TestAttach(t *testing.T) {
	e := newRouteEnv(t)
	e.run(t, testPod("ns", "web", "api-uid", podutil.APIServerSource, "main"))

	out, stderr, err := e.execIn(t, "/attach/ns/web/main", "typed input")
	require.NoError(t, err)
	assert.Equal(t, "typed input", out)
	assert.Contains(t, stderr, "runs no process")

	for path, want := range map[string]int{
		"/attach/ns/web/main":                    http.StatusBadRequest, // no stream
		"/attach/ns/nope/main?output=1":          http.StatusNotFound,
		"/attach/ns/web/nope?output=1":           http.StatusNotFound,
		"/attach/ns/web/other-uid/main?output=1": http.StatusNotFound,
		"/attach/ns/..%2F..%2Fx/main?output=1":   http.StatusBadRequest,
	} {
		resp, err := e.srv.Client().Post(e.srv.URL+path, "", nil)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, want, resp.StatusCode, path)
	}

	e.provider = bareProvider{e.provider}
	e.serve(t)
	code, body := e.get(t, "/attach/ns/web/main?output=1")
	assert.Equal(t, http.StatusNotImplemented, code, body)
	assert.Contains(t, body, "ContainerAttachHandler")
}
