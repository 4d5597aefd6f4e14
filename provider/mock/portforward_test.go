package mock

import (
	"context"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/provider"
)

func serving(name string, annotations map[string]string) *corev1.Pod {
	pod := newPod(name, annotations)
	pod.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 8080}, {ContainerPort: 53, Protocol: corev1.ProtocolUDP}}
	pod.Spec.InitContainers[0].Ports = []corev1.ContainerPort{{ContainerPort: 9000, Protocol: corev1.ProtocolTCP}}
	return pod
}

// forward runs PortForward on one end of a pipe and returns the other end.
func forward(t *testing.T, p *Provider, ctx context.Context, name string, port int32) (net.Conn, <-chan error) {
	t.Helper()
	local, remote := net.Pipe()
	t.Cleanup(func() { local.Close(); remote.Close() })
	done := make(chan error, 1)
	go func() { done <- p.PortForward(ctx, "ns", name, port, remote) }()
	return local, done
}

func waitErr(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("PortForward did not return")
		return nil
	}
}

func TestPortForwardEchoes(t *testing.T) {
	for _, port := range []int32{8080, 9000} { // a main container's, an init container's
		t.Run(fmt.Sprint(port), func(t *testing.T) {
			h := newHarness(t)
			require.NoError(t, h.p.CreatePod(context.Background(), serving("web", nil)))
			local, done := forward(t, h.p, context.Background(), "web", port)
			for _, msg := range []string{"ping", "a longer message\n"} {
				_, err := local.Write([]byte(msg))
				require.NoError(t, err)
				got := make([]byte, len(msg))
				_, err = io.ReadFull(local, got)
				require.NoError(t, err)
				assert.Equal(t, msg, string(got))
			}
			require.NoError(t, local.Close())
			assert.NoError(t, waitErr(t, done), "the client closed its side: done")
		})
	}
}

func TestPortForwardRefusals(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	require.NoError(t, h.p.CreatePod(ctx, serving("web", nil)))
	require.NoError(t, h.p.CreatePod(ctx, serving("slow", map[string]string{CreateDelayAnnotation: "1m"})))
	for _, tc := range []struct {
		name, pod string
		port      int32
		check     func(error) bool
		mention   string
	}{
		{name: "undeclared port", pod: "web", port: 8081, check: provider.IsInvalidInput, mention: "port 8081"},
		{name: "UDP port", pod: "web", port: 53, check: provider.IsInvalidInput, mention: "port 53"},
		{name: "unknown pod", pod: "ghost", port: 8080, check: provider.IsNotFound, mention: "ns/ghost"},
		{name: "pod not running", pod: "slow", port: 8080, check: func(err error) bool {
			return err != nil && !provider.IsNotFound(err) && !provider.IsInvalidInput(err)
		}, mention: "Pending"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			local, done := forward(t, h.p, ctx, tc.pod, tc.port)
			err := waitErr(t, done)
			assert.True(t, tc.check(err), "%v", err)
			assert.ErrorContains(t, err, tc.mention)
			local.Close()
		})
	}
}

func TestPortForwardEndsWithCtx(t *testing.T) {
	h := newHarness(t)
	require.NoError(t, h.p.CreatePod(context.Background(), serving("web", nil)))
	ctx, cancel := context.WithCancel(context.Background())
	local, done := forward(t, h.p, ctx, "web", 8080)
	_, err := local.Write([]byte("x"))
	require.NoError(t, err)
	_, err = io.ReadFull(local, make([]byte, 1))
	require.NoError(t, err)
	cancel()
	assert.ErrorIs(t, waitErr(t, done), context.Canceled)
	_, err = local.Read(make([]byte, 1))
	assert.ErrorIs(t, err, io.EOF, "the provider closed the stream, ending its pending Read")
}
