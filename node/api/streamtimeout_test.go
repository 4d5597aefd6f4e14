package api

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"

	"github.com/vk-static/vk-static/podutil"
)

// Routes.StreamIdleTimeout as cri-streaming takes it: 0 is the kubelet's 4h default, negative is
// cri-streaming's 0 (never).
func TestStreamIdleTimeoutDefaults(t *testing.T) {
	for _, tc := range []struct {
		set, want time.Duration
	}{
		{0, 4 * time.Hour},
		{-1, 0},
		{-time.Hour, 0},
		{5 * time.Minute, 5 * time.Minute},
	} {
		assert.Equal(t, tc.want, Routes{StreamIdleTimeout: tc.set}.streamIdleTimeout(), "StreamIdleTimeout %s", tc.set)
	}
}

// An exec stream that carries nothing for StreamIdleTimeout is closed by the server: the
// client's stream ends although its stdin is still open and the command still waits on it.
func TestStreamIdleTimeoutClosesAnIdleExec(t *testing.T) {
	e := newRouteEnv(t)
	e.run(t, testPod("ns", "web", "api-uid", podutil.APIServerSource, "main"))
	const idle = 300 * time.Millisecond
	mux := http.NewServeMux()
	Routes{Pods: e.pods, Provider: e.provider, StreamIdleTimeout: idle}.Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	q := url.Values{"command": {"cat"}, "input": {"1"}, "output": {"1"}, "error": {"1"}}
	u, err := url.Parse(srv.URL + "/exec/ns/web/main?" + q.Encode())
	require.NoError(t, err)
	ex, err := remotecommand.NewSPDYExecutor(&rest.Config{Host: srv.URL}, http.MethodPost, u)
	require.NoError(t, err)
	stdin, typing := io.Pipe() // nothing is ever typed
	t.Cleanup(func() { _ = typing.Close() })

	start := time.Now()
	done := make(chan error, 1)
	go func() {
		done <- ex.StreamWithContext(context.Background(), remotecommand.StreamOptions{Stdin: stdin, Stdout: io.Discard, Stderr: io.Discard})
	}()
	select {
	case <-done:
		// Closed by the server: the client's pings (every 5 s) come too late to keep it.
		assert.GreaterOrEqual(t, time.Since(start), idle, "not before the idle timeout")
	case <-time.After(30 * time.Second):
		_ = typing.Close()
		t.Fatal("an idle stream was not closed")
	}
	_ = typing.Close() // the client's stdin copier returns
}
