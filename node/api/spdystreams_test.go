package api

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/rest"
	clientremotecommand "k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/transport/spdy"
	"k8s.io/cri-streaming/pkg/streaming/remotecommand"

	"github.com/vk-static/vk-static/podutil"
)

// dialStreams upgrades path to SPDY offering protocol alone, as a client speaking only it would.
func (e *routeEnv) dialStreams(t *testing.T, path, protocol string) httpstream.Connection {
	t.Helper()
	rt, upgrader, err := spdy.RoundTripperFor(&rest.Config{Host: e.srv.URL})
	require.NoError(t, err)
	u, err := url.Parse(e.srv.URL + path)
	require.NoError(t, err)
	conn, got, err := spdy.NewDialer(upgrader, &http.Client{Transport: rt}, http.MethodPost, u).Dial(protocol)
	require.NoError(t, err)
	require.Equal(t, protocol, got)
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

func createStream(t *testing.T, conn httpstream.Connection, streamType string) httpstream.Stream {
	t.Helper()
	s, err := conn.CreateStream(http.Header{corev1.StreamType: {streamType}})
	require.NoError(t, err)
	return s
}

// Every SPDY protocol of exec (v1 to v4) runs the command and reports how it ended: v4 as a
// JSON status with the exit code, v2 and v3 as a failure's message only, v1 not at all (the
// kubelet's, as cri-streaming serves it).
func TestExecOverEachSPDYProtocol(t *testing.T) {
	e := newRouteEnv(t)
	e.run(t, testPod("ns", "web", "api-uid", podutil.APIServerSource, "main"))
	for _, protocol := range []string{remotecommand.StreamProtocolV4Name, remotecommand.StreamProtocolV3Name,
		remotecommand.StreamProtocolV2Name, remotecommand.StreamProtocolV1Name} {
		t.Run(protocol, func(t *testing.T) {
			run := func(cmd string) (stdout, status string) {
				conn := e.dialStreams(t, "/exec/ns/web/main?output=1&command="+cmd, protocol)
				errStream := createStream(t, conn, corev1.StreamTypeError)
				out := createStream(t, conn, corev1.StreamTypeStdout)
				b, err := io.ReadAll(out)
				require.NoError(t, err)
				st, err := io.ReadAll(errStream)
				require.NoError(t, err)
				return string(b), string(st)
			}
			out, status := run("hostname")
			assert.Equal(t, "web\n", out)
			_, failed := run("no-such-command")
			switch protocol {
			case remotecommand.StreamProtocolV1Name: // its error stream is reset once open
				assert.Empty(t, status)
				assert.Empty(t, failed)
				return
			case remotecommand.StreamProtocolV3Name, remotecommand.StreamProtocolV2Name:
				assert.Empty(t, status, "success is not written")
				assert.Contains(t, failed, "command terminated with non-zero exit code")
				return
			}
			assert.JSONEq(t, `{"status":"Success"}`, status)
			var st commandStatus
			require.NoError(t, json.Unmarshal([]byte(failed), &st), failed)
			assert.Equal(t, statusFailure, st.Status)
			assert.Equal(t, remotecommand.NonZeroExitCodeReason, st.Reason)
			require.NotNil(t, st.Details)
			assert.Equal(t, []statusCause{{Type: remotecommand.ExitCodeCauseType, Message: "127"}}, st.Details.Causes)
		})
	}
}

// A client that hangs up before it has opened all its streams ends the exec there: the handler
// does not wait out the 30 s it gives a client to open them (newRouteEnv's leak check, which
// waits 10 s, fails if it does).
func TestExecEndsWhenTheClientHangsUpBeforeItsStreams(t *testing.T) {
	e := newRouteEnv(t)
	e.run(t, testPod("ns", "web", "api-uid", podutil.APIServerSource, "main"))
	conn := e.dialStreams(t, "/exec/ns/web/main?input=1&output=1&error=1&command=cat", remotecommand.StreamProtocolV4Name)
	createStream(t, conn, corev1.StreamTypeError)
	require.NoError(t, conn.Close())
}

// A terminal's sizes, as the client writes them on the resize stream, reach the command in
// order; the sizes channel closes when the stream ends.
func TestDecodeSizes(t *testing.T) {
	r, w := io.Pipe()
	sizes := make(chan remotecommand.TerminalSize)
	go decodeSizes(context.Background(), r, sizes)
	go func() {
		_, _ = io.WriteString(w, `{"width":80,"height":24}{"width":100,"height":30}`)
		_ = w.Close()
	}()
	var got []remotecommand.TerminalSize
	for s := range sizes {
		got = append(got, s)
	}
	assert.Equal(t, []remotecommand.TerminalSize{{Width: 80, Height: 24}, {Width: 100, Height: 30}}, got)

	// Ended by its context when nobody takes the size.
	r, w = io.Pipe()
	defer w.Close()
	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		decodeSizes(ctx, r, make(chan remotecommand.TerminalSize))
	}()
	_, err := io.WriteString(w, `{"width":1,"height":1}`)
	require.NoError(t, err)
	cancel()
	<-ended
}

// An exec with a terminal opens its resize stream too (v4), and runs.
func TestExecWithATerminal(t *testing.T) {
	e := newRouteEnv(t)
	e.run(t, testPod("ns", "web", "api-uid", podutil.APIServerSource, "main"))
	u, err := url.Parse(e.srv.URL + "/exec/ns/web/main?" + url.Values{"command": {"hostname"}, "output": {"1"}, "tty": {"1"}}.Encode())
	require.NoError(t, err)
	ex, err := clientremotecommand.NewSPDYExecutor(&rest.Config{Host: e.srv.URL}, http.MethodPost, u)
	require.NoError(t, err)
	var out strings.Builder
	require.NoError(t, ex.StreamWithContext(context.Background(), clientremotecommand.StreamOptions{Stdout: &out, Tty: true,
		TerminalSizeQueue: unknownSize{}}))
	assert.Contains(t, out.String(), "web")
}

// unknownSize is a terminal whose size is never known.
type unknownSize struct{}

func (unknownSize) Next() *clientremotecommand.TerminalSize { return nil }
