package api

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	utilexec "k8s.io/utils/exec"

	"github.com/vk-static/vk-static/podutil"
)

// execIn streams with path as kubectl exec and attach do (SPDY): cmd (none for attach), stdin
// when given, stdout and stderr.
func (e *routeEnv) execIn(t *testing.T, path string, stdin string, cmd ...string) (string, string, error) {
	t.Helper()
	q := url.Values{"command": cmd, "output": {"1"}, "error": {"1"}}
	if stdin != "" {
		q.Set("input", "1")
	}
	u, err := url.Parse(e.srv.URL + path + "?" + q.Encode())
	require.NoError(t, err)
	ex, err := remotecommand.NewSPDYExecutor(&rest.Config{Host: e.srv.URL}, http.MethodPost, u)
	require.NoError(t, err)
	var stdout, stderr bytes.Buffer
	opts := remotecommand.StreamOptions{Stdout: &stdout, Stderr: &stderr}
	if stdin != "" {
		opts.Stdin = strings.NewReader(stdin)
	}
	err = ex.StreamWithContext(context.Background(), opts)
	return stdout.String(), stderr.String(), err
}

// exec runs the provider's command, passing stdin and output through and the exit code back;
// bad requests are refused before any stream opens.
func TestExec(t *testing.T) {
	e := newRouteEnv(t)
	e.run(t, testPod("ns", "web", "api-uid", podutil.APIServerSource, "main"))

	out, _, err := e.execIn(t, "/exec/ns/web/main", "", "echo", "hello", "world")
	require.NoError(t, err)
	assert.Equal(t, "hello world\n", out)

	out, _, err = e.execIn(t, "/exec/ns/web/api-uid/main", "typed input", "cat")
	require.NoError(t, err)
	assert.Equal(t, "typed input", out)

	_, stderr, err := e.execIn(t, "/exec/ns/web/main", "", "no-such-command")
	var exit utilexec.ExitError
	require.True(t, errors.As(err, &exit), "%v", err)
	assert.Equal(t, 127, exit.ExitStatus())
	assert.Contains(t, stderr, "command not found")

	e.expectPosts(t, map[string]int{
		"/exec/ns/web/main":                                http.StatusBadRequest, // no command
		"/exec/ns/nope/main?command=env&output=1":          http.StatusNotFound,
		"/exec/ns/web/nope?command=env&output=1":           http.StatusNotFound,
		"/exec/ns/web/other-uid/main?command=env&output=1": http.StatusNotFound,
		"/exec/ns/web%2F..%2Fx/main?command=env&output=1":  http.StatusBadRequest,
		"/exec/ns/web/main?command=env":                    http.StatusBadRequest, // no stream
	})

	e.expectNotImplemented(t, "/exec/ns/web/main?command=env&output=1", "ContainerExecHandler")
}
