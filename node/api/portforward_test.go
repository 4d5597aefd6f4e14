package api

import (
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/moby/spdystream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"

	"github.com/vk-static/vk-static/podutil"
)

// dialPortForward opens a port-forward connection to path as kubectl port-forward does (SPDY).
func (e *routeEnv) dialPortForward(t *testing.T, path string) httpstream.Connection {
	t.Helper()
	rt, upgrader, err := spdy.RoundTripperFor(&rest.Config{Host: e.srv.URL})
	require.NoError(t, err)
	u, err := url.Parse(e.srv.URL + path)
	require.NoError(t, err)
	conn, _, err := spdy.NewDialer(upgrader, &http.Client{Transport: rt}, http.MethodPost, u).Dial(portforward.PortForwardProtocolV1Name)
	require.NoError(t, err)
	// Closed on failure too: its goroutines would otherwise fail the next test's leak check.
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// forward opens the error and data streams of one connection to port.
func forward(t *testing.T, conn httpstream.Connection, port, id string) (errStream, data httpstream.Stream) {
	t.Helper()
	errStream, data, err := openForward(conn, port, id)
	require.NoError(t, err)
	return errStream, data
}

// openForward opens the error stream, then the data stream, as client-go's port-forward does.
// The error of the data stream's creation is returned as it comes: a forward that fails resets
// both streams, which can reach the client before the data stream's reply.
func openForward(conn httpstream.Connection, port, id string) (errStream, data httpstream.Stream, err error) {
	h := http.Header{}
	h.Set(corev1.StreamType, corev1.StreamTypeError)
	h.Set(corev1.PortHeader, port)
	h.Set(corev1.PortForwardRequestIDHeader, id)
	if errStream, err = conn.CreateStream(h); err != nil {
		return nil, nil, err
	}
	if err = errStream.Close(); err != nil { // the client writes nothing on it
		return nil, nil, err
	}
	h.Set(corev1.StreamType, corev1.StreamTypeData)
	data, err = conn.CreateStream(h)
	return errStream, data, err
}

// A forwarded connection reaches the provider's port (the mock echoes on a declared one); an
// undeclared port fails that connection with the provider's reason; bad requests are refused.
func TestPortForward(t *testing.T) {
	e := newRouteEnv(t)
	pod := testPod("ns", "web", "api-uid", podutil.APIServerSource, "main")
	pod.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 8080}}
	e.run(t, pod)

	conn := e.dialPortForward(t, "/portForward/ns/web/api-uid")
	errStream, data := forward(t, conn, "8080", "0")
	_, err := data.Write([]byte("ping"))
	require.NoError(t, err)
	require.NoError(t, data.Close()) // ends the connection's input
	got, err := io.ReadAll(data)
	require.NoError(t, err)
	assert.Equal(t, "ping", string(got))
	msg, err := io.ReadAll(errStream)
	require.NoError(t, err)
	assert.Empty(t, string(msg))

	// The failed forward writes its reason on the error stream, then resets both streams: the
	// client sees the reason, or (the reset overtaking the data stream's reply, a race in the
	// protocol that kubectl reports as "error creating forwarding stream") the reset.
	errStream, data, err = openForward(conn, "9999", "1")
	if err == nil {
		msg, err = io.ReadAll(errStream)
		_ = data.Close()
	}
	if err == nil {
		assert.Contains(t, string(msg), "9999")
	} else {
		assert.ErrorIs(t, err, spdystream.ErrReset)
	}
	require.NoError(t, conn.Close())

	e.expectPosts(t, map[string]int{
		"/portForward/ns/nope":          http.StatusNotFound,
		"/portForward/ns/web/other-uid": http.StatusNotFound,
		"/portForward/ns/..%2Fx":        http.StatusBadRequest,
	})

	e.expectNotImplemented(t, "/portForward/ns/web", "PortForwardHandler")
}
