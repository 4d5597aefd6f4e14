package api

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"

	"github.com/vk-static/vk-static/podutil"
)

// A stream whose client goes away mid-way ends on the server too, whatever the provider's call
// waits for. kubectl attach without -i is the case that was left running: the mock's attach
// then waits only for its context or the container's end, and net/http does not end the
// context of a hijacked connection. With stdin, its end already ends the call; those stay as
// checks. newRouteEnv's leak check fails when the handler or the provider's call is left.
func TestStreamsEndWhenTheClientHangsUp(t *testing.T) {
	for _, tc := range []struct {
		name  string
		path  string
		query url.Values
		stdin bool
		ready string // what the client reads once the provider's call runs
	}{
		{name: "attach without stdin", path: "/attach/ns/web/main",
			query: url.Values{"output": {"1"}, "error": {"1"}}, ready: "runs no process"},
		{name: "attach with stdin", path: "/attach/ns/web/main",
			query: url.Values{"input": {"1"}, "output": {"1"}, "error": {"1"}}, stdin: true, ready: "runs no process"},
		{name: "exec cat with stdin open", path: "/exec/ns/web/api-uid/main",
			query: url.Values{"command": {"cat"}, "input": {"1"}, "output": {"1"}, "error": {"1"}}, stdin: true, ready: "typed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newRouteEnv(t)
			e.run(t, testPod("ns", "web", "api-uid", podutil.APIServerSource, "main"))
			u, err := url.Parse(e.srv.URL + tc.path + "?" + tc.query.Encode())
			require.NoError(t, err)
			ex, err := remotecommand.NewSPDYExecutor(&rest.Config{Host: e.srv.URL}, http.MethodPost, u)
			require.NoError(t, err)

			// Both outputs go to one pipe, read until the call is seen running.
			outR, outW := io.Pipe()
			t.Cleanup(func() { _ = outR.Close() })
			opts := remotecommand.StreamOptions{Stdout: outW, Stderr: outW}
			if tc.stdin {
				inR, inW := io.Pipe() // never closed by the client: it just goes away
				t.Cleanup(func() { _ = inW.Close() })
				go func() { _, _ = io.WriteString(inW, "typed\n") }()
				opts.Stdin = inR
			}
			ctx, leave := context.WithCancel(context.Background())
			defer leave()
			streamed := make(chan error, 1)
			go func() { streamed <- ex.StreamWithContext(ctx, opts) }()

			seen := make(chan string, 1)
			go func() {
				var b strings.Builder
				r := bufio.NewReader(outR)
				for !strings.Contains(b.String(), tc.ready) {
					line, err := r.ReadString('\n')
					b.WriteString(line)
					if err != nil {
						break
					}
				}
				seen <- b.String()
				_, _ = io.Copy(io.Discard, r) // what comes after, until the pipe closes
			}()
			select {
			case got := <-seen:
				require.Contains(t, got, tc.ready)
			case err := <-streamed:
				t.Fatalf("the stream ended before the call ran: %v", err)
			}

			leave() // the client closes its connection
			err = <-streamed
			assert.True(t, errors.Is(err, context.Canceled), "%v", err)
			_ = outW.Close()
		})
	}
}
