package agent_test

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/vk-static/vk-static/agent"
	"github.com/vk-static/vk-static/kubeclient"
	"github.com/vk-static/vk-static/node/api"
	"github.com/vk-static/vk-static/test/support/testenv"
)

// A flood of kubelet API requests with made-up bearer tokens — anyone who reaches the port can
// send them, and each is a TokenReview the cache has never seen — used up the rate limit the
// Lease shared with the reviews, until the Lease expired and the node went NotReady. With the
// heartbeat on a client of its own (as the kubelet's), the Lease is renewed on time while the
// reviews wait: the flood is one HTTP client with many connections, sending until the
// reviews' limiter is exhausted.
func TestLeaseRenewedUnderATokenReviewFlood(t *testing.T) {
	const (
		name          = "heartbeat-node"
		leaseSeconds  = 6 // renewed every 1.5 s
		flooders      = 100
		floodDuration = 12 * time.Second
		// A rate limit the flood exhausts on two cores shared with the API server and the
		// flood itself (--kube-api-qps 5): the kubelet's default of 50 needs more requests a
		// second than such a machine makes.
		qps, burst = 5, 10
	)
	ctx := context.Background()
	cfg, _, verifyNoLeaks := env.LeakCheckedNodeClient(t, name, 10*time.Second)
	client := func(qps float32, burst int) kubeclient.Interface {
		c := rest.CopyConfig(cfg)
		c.QPS, c.Burst = qps, burst
		cs, err := kubeclient.New(c)
		require.NoError(t, err)
		return cs
	}
	port, err := testenv.FreePort()
	require.NoError(t, err)
	a, err := agent.New(agent.Config{
		NodeName:                 name,
		NewProvider:              built(&instantProvider{pods: map[string]*corev1.Pod{}}),
		Client:                   client(qps, burst),
		HeartbeatClient:          client(-1, 0),
		ReviewClient:             client(qps, burst),
		NodeLeaseDurationSeconds: leaseSeconds,
		Node:                     agent.NewNode(name, "127.0.0.1", nil),
		API:                      &api.Config{Address: "127.0.0.1", Port: port, CertDirectory: t.TempDir()},
	})
	require.NoError(t, err)
	runWithAPI(t, a, name, verifyNoLeaks)
	renewed := func() time.Time {
		l, err := env.Admin.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, name, metav1.GetOptions{})
		if err != nil || l.Spec.RenewTime == nil {
			return time.Time{}
		}
		return l.Spec.RenewTime.Time
	}
	require.Eventually(t, func() bool { return !renewed().IsZero() }, 10*time.Second, 50*time.Millisecond, "the first Lease")

	floodCtx, stopFlood := context.WithTimeout(ctx, floodDuration)
	defer stopFlood()
	transport := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, MaxIdleConnsPerHost: flooders} //nolint:gosec // the agent's self-signed certificate; only made-up tokens are sent
	defer transport.CloseIdleConnections()
	flood := &http.Client{Transport: transport}
	var wg sync.WaitGroup
	var mu sync.Mutex
	refused, slowest := 0, time.Duration(0)
	for range flooders {
		wg.Go(func() {
			for floodCtx.Err() == nil {
				req, _ := http.NewRequestWithContext(floodCtx, http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d/pods", port), nil)
				token := make([]byte, 16)
				_, _ = rand.Read(token)
				req.Header.Set("Authorization", "Bearer "+hex.EncodeToString(token))
				start := time.Now()
				resp, err := flood.Do(req)
				if err != nil {
					continue
				}
				resp.Body.Close()
				mu.Lock()
				if resp.StatusCode == http.StatusUnauthorized {
					refused++
					slowest = max(slowest, time.Since(start))
				}
				mu.Unlock()
			}
		})
	}

	// The Lease's renewals while the flood lasts: no gap as long as the lease duration.
	last, longest := renewed(), time.Duration(0)
	for floodCtx.Err() == nil {
		if r := renewed(); r.After(last) {
			longest = max(longest, r.Sub(last))
			last = r
		}
		time.Sleep(100 * time.Millisecond)
	}
	// A Lease not renewed since is a gap too, to the flood's end.
	longest = max(longest, time.Since(last))
	wg.Wait()
	t.Logf("made-up tokens refused: %d, the slowest refusal in %s; the longest gap between Lease renewals: %s", refused, slowest, longest)
	require.Positive(t, refused, "the flood reached the reviews")
	assert.Less(t, longest, leaseSeconds*time.Second, "the Lease lapsed while the reviews were flooded")
}
