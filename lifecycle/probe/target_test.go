package probe

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	clocktesting "k8s.io/utils/clock/testing"
)

// TestTargetAsksPodIPEachTime: httpGet and tcpSocket actions, probes and hooks alike, go to
// the address PodIP gives when they run — none at first (the pod's sandbox has none yet),
// then the pod's — and Host, when set, wins.
func TestTargetAsksPodIPEachTime(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer srv.Close()
	_, port := serverTarget(t, srv)
	var ip atomic.Value
	ip.Store("")
	target := Target{PodIP: func() string { return ip.Load().(string) }}
	tcp := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(port)}}}
	hook := &corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(port)}}
	clk := clocktesting.NewFakeClock(time.Now())

	for _, p := range []*corev1.Probe{httpProbeSpec("/", port), tcp} {
		_, _, err := Run(t.Context(), p, target)
		require.ErrorIs(t, err, ErrNoHost, "no address yet")
	}
	_, err := RunHook(t.Context(), clk, hook, target)
	require.Error(t, err, "no address yet")

	ip.Store("127.0.0.1")
	for _, p := range []*corev1.Probe{httpProbeSpec("/", port), tcp} {
		got, msg, err := Run(t.Context(), p, target)
		require.NoError(t, err)
		assert.Equal(t, Success, got, msg)
	}
	_, err = RunHook(t.Context(), clk, hook, target)
	require.NoError(t, err, "the hook reaches the address once known")

	ip.Store("192.0.2.1") // never dialled: Host wins
	target.Host = "127.0.0.1"
	got, _, err := Run(t.Context(), tcp, target)
	require.NoError(t, err)
	assert.Equal(t, Success, got)
}
