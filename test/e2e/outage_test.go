package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vk-static/vk-static/podutil"
	"github.com/vk-static/vk-static/test/support/agentproc"
)

// TestAPIServerOutage: the API server is killed, the manifest edited 3 s later and the API
// server started again 20 s after that. While it is down nothing running is deleted or
// restarted and the edit takes effect locally; within 10 s of the API server answering /readyz
// the mirror shows the edited pod Running — however the retried DELETE of the old mirror was
// answered by the API server on its way up (a 404 while NodeRestriction's informer has not
// synced once left the stale mirror forever) — and the API pod that ran throughout keeps its
// UID and start time. It must run alone: it stops the package's shared API server.
func TestAPIServerOutage(t *testing.T) {
	node := agentproc.NodeName(t)
	proxy := newAPIProxy(t, node)
	a := startAgent(t, agentOptions{node: node, apiHost: proxy.URL})
	ctx := context.Background()
	ns := env.Namespace(t)
	a.WriteManifest("web.yaml", manifest("web", "nginx:1"))
	if _, err := env.Admin.CoreV1().Pods(ns).Create(ctx, apiPod("api", a.Node), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	a.runningMirror("web", "nginx:1")
	var before *corev1.Pod
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		p, err := env.Admin.CoreV1().Pods(ns).Get(ctx, "api", metav1.GetOptions{})
		require.NoError(c, err)
		if p.Status.Phase != corev1.PodRunning || p.Status.StartTime == nil {
			c.Errorf("phase %s", p.Status.Phase)
			return
		}
		before = p
	}, 10*time.Second, 50*time.Millisecond, "API pod running")
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		if n := a.metric(c, "vk_static_provider_pods"); n != 2 {
			c.Errorf("%v", n)
		}
	}, 10*time.Second, 50*time.Millisecond, "two provider pods")

	// The first DELETE of the old mirror that reaches the API server on its way back up is
	// answered 404 while the mirror is still there, as NodeRestriction does before its informer
	// has synced (real timing hits that window only now and then).
	proxy.notFoundPodDeletes.Store(1)
	env.StopAPIServer() // SIGKILL
	outage := time.Now()
	for time.Since(outage) < 3*time.Second {
		time.Sleep(100 * time.Millisecond) // the scenario's timing, not waiting for a result
	}
	a.WriteManifest("web.yaml", manifest("web", "nginx:2")) // must take effect without the API server
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		creates := a.metric(c, "vk_static_provider_call_duration_seconds_count", `call="CreatePod"`)
		deletes := a.metric(c, "vk_static_provider_call_duration_seconds_count", `call="DeletePod"`)
		if creates != 3 || deletes != 1 {
			c.Errorf("CreatePod %v DeletePod %v, want 3 and 1", creates, deletes)
		}
	}, 10*time.Second, 50*time.Millisecond, "the edit applied locally")
	for time.Since(outage) < 23*time.Second {
		if n := a.metric(t, "vk_static_provider_pods"); n != 2 {
			t.Fatalf("provider runs %v pods during the outage, want 2", n)
		}
		time.Sleep(time.Second) // sampling during the outage, not waiting for a result
	}
	if err := env.StartAPIServer(ctx); err != nil { // returns once /readyz answers ok
		t.Fatal(err)
	}
	back := time.Now()

	require.EventuallyWithT(t, func(c *assert.CollectT) {
		p, err := env.Admin.CoreV1().Pods("default").Get(ctx, "web-"+a.Node, metav1.GetOptions{})
		require.NoError(c, err)
		if p.Spec.Containers[0].Image != "nginx:2" || p.Status.Phase != corev1.PodRunning {
			c.Errorf("image %s phase %s", p.Spec.Containers[0].Image, p.Status.Phase)
		}
	}, 10*time.Second, 50*time.Millisecond, "mirror of the edited pod Running")
	t.Logf("mirror converged %s after /readyz", time.Since(back).Round(time.Millisecond))
	if n := proxy.injected.Load(); n != 1 {
		t.Errorf("%d DELETEs answered 404, want 1: the scenario did not happen", n)
	}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		l, err := env.Admin.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, a.Node, metav1.GetOptions{})
		require.NoError(c, err)
		if l.Spec.RenewTime.Time.Before(back) {
			c.Errorf("last renewed %v", l.Spec.RenewTime)
		}
	}, 10*time.Second, 50*time.Millisecond, "lease renewed after the outage")
	p, err := env.Admin.CoreV1().Pods(ns).Get(ctx, "api", metav1.GetOptions{})
	switch {
	case err != nil:
		t.Errorf("API pod after the outage: %v", err)
	case p.UID != before.UID || p.Status.Phase != corev1.PodRunning:
		t.Errorf("API pod after the outage: UID %s phase %s, want UID %s Running", p.UID, p.Status.Phase, before.UID)
	case p.Status.StartTime == nil || !p.Status.StartTime.Equal(before.Status.StartTime):
		t.Errorf("API pod restarted: startTime %v, was %v", p.Status.StartTime, before.Status.StartTime)
	}
	if n := a.metric(t, "vk_static_provider_pods"); n != 2 {
		t.Errorf("provider runs %v pods after the outage, want 2", n)
	}
	if n := a.metric(t, "vk_static_provider_call_duration_seconds_count", `call="CreatePod"`); n != 3 {
		t.Errorf("CreatePod calls %v after the outage, want 3 (nothing restarted)", n)
	}
}

// TestManifestURL: pods from a manifest URL get mirrors with config.source=http and keep
// running while the URL fails.
func TestManifestURL(t *testing.T) {
	var failing atomic.Bool
	var sawHeader atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Token") == "secret" {
			sawHeader.Store(true)
		}
		if failing.Load() {
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		fmt.Fprint(w, manifest("fromurl", "nginx:1"))
	}))
	defer srv.Close()
	a := startAgent(t, agentOptions{extraArgs: []string{
		"--manifest-url", srv.URL, "--manifest-url-header", "X-Token:secret", "--http-check-frequency", "200ms",
	}})
	m := a.runningMirror("fromurl", "nginx:1")
	if got := m.Annotations[podutil.ConfigSourceAnnotationKey]; got != podutil.HTTPSource {
		t.Errorf("config.source = %q, want http", got)
	}
	if !sawHeader.Load() {
		t.Errorf("--manifest-url-header not sent")
	}
	failing.Store(true)
	deadline := time.Now().Add(3 * time.Second) // 15 polls
	for time.Now().Before(deadline) {
		if n := a.metric(t, "vk_static_provider_pods"); n != 1 {
			t.Fatalf("provider runs %v pods while the URL fails, want 1", n)
		}
		time.Sleep(200 * time.Millisecond)
	}
	failing.Store(false)
	if again := a.runningMirror("fromurl", "nginx:1"); again.UID != m.UID {
		t.Errorf("mirror replaced after the URL came back")
	}
	if n := a.metric(t, "vk_static_provider_call_duration_seconds_count", `call="CreatePod"`); n != 1 {
		t.Errorf("CreatePod calls = %v, want 1", n)
	}
}
