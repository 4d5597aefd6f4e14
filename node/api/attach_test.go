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

	e.expectPosts(t, map[string]int{
		"/attach/ns/web/main":                    http.StatusBadRequest, // no stream
		"/attach/ns/nope/main?output=1":          http.StatusNotFound,
		"/attach/ns/web/nope?output=1":           http.StatusNotFound,
		"/attach/ns/web/other-uid/main?output=1": http.StatusNotFound,
		"/attach/ns/..%2F..%2Fx/main?output=1":   http.StatusBadRequest,
	})

	e.expectNotImplemented(t, "/attach/ns/web/main?output=1", "ContainerAttachHandler")
}
