package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vk-static/vk-static/podutil"
)

// TestAPIServerOutage: the API server is killed, the manifest edited 3 s later and the API
// server started again 20 s after that. While it is down nothing running is deleted or
// restarted and the edit takes effect locally; within 10 s of the API server answering /readyz
// the mirror shows the edited pod Running — however the retried DELETE of the old mirror was
// answered by the API server on its way up (a 404 while NodeRestriction's informer has not
// synced once left the stale mirror forever) — and the API pod that ran throughout keeps its
// UID and start time. It must run alone: it stops the package's shared API server.
func TestAPIServerOutage(t *testing.T) {
	node := nodeNameFor(t)
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
	eventually(t, 10*time.Second, "API pod running", func() error {
		p, err := env.Admin.CoreV1().Pods(ns).Get(ctx, "api", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Status.Phase != corev1.PodRunning || p.Status.StartTime == nil {
			return fmt.Errorf("phase %s", p.Status.Phase)
		}
		before = p
		return nil
	})
	eventually(t, 10*time.Second, "two provider pods", func() error {
		if n := a.metric("vk_static_provider_pods"); n != 2 {
			return fmt.Errorf("%v", n)
		}
		return nil
	})

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
	eventually(t, 10*time.Second, "the edit applied locally", func() error {
		creates := a.metric("vk_static_provider_call_duration_seconds_count", `call="CreatePod"`)
		deletes := a.metric("vk_static_provider_call_duration_seconds_count", `call="DeletePod"`)
		if creates != 3 || deletes != 1 {
			return fmt.Errorf("CreatePod %v DeletePod %v, want 3 and 1", creates, deletes)
		}
		return nil
	})
	for time.Since(outage) < 23*time.Second {
		if n := a.metric("vk_static_provider_pods"); n != 2 {
			t.Fatalf("provider runs %v pods during the outage, want 2", n)
		}
		time.Sleep(time.Second) // sampling during the outage, not waiting for a result
	}
	if err := env.StartAPIServer(ctx); err != nil { // returns once /readyz answers ok
		t.Fatal(err)
	}
	back := time.Now()

	eventually(t, 10*time.Second, "mirror of the edited pod Running", func() error {
		p, err := env.Admin.CoreV1().Pods("default").Get(ctx, "web-"+a.Node, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Spec.Containers[0].Image != "nginx:2" || p.Status.Phase != corev1.PodRunning {
			return fmt.Errorf("image %s phase %s", p.Spec.Containers[0].Image, p.Status.Phase)
		}
		return nil
	})
	t.Logf("mirror converged %s after /readyz", time.Since(back).Round(time.Millisecond))
	if n := proxy.injected.Load(); n != 1 {
		t.Errorf("%d DELETEs answered 404, want 1: the scenario did not happen", n)
	}
	eventually(t, 10*time.Second, "lease renewed after the outage", func() error {
		l, err := env.Admin.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, a.Node, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if l.Spec.RenewTime.Time.Before(back) {
			return fmt.Errorf("last renewed %v", l.Spec.RenewTime)
		}
		return nil
	})
	p, err := env.Admin.CoreV1().Pods(ns).Get(ctx, "api", metav1.GetOptions{})
	switch {
	case err != nil:
		t.Errorf("API pod after the outage: %v", err)
	case p.UID != before.UID || p.Status.Phase != corev1.PodRunning:
		t.Errorf("API pod after the outage: UID %s phase %s, want UID %s Running", p.UID, p.Status.Phase, before.UID)
	case p.Status.StartTime == nil || !p.Status.StartTime.Equal(before.Status.StartTime):
		t.Errorf("API pod restarted: startTime %v, was %v", p.Status.StartTime, before.Status.StartTime)
	}
	if n := a.metric("vk_static_provider_pods"); n != 2 {
		t.Errorf("provider runs %v pods after the outage, want 2", n)
	}
	if n := a.metric("vk_static_provider_call_duration_seconds_count", `call="CreatePod"`); n != 3 {
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
		if n := a.metric("vk_static_provider_pods"); n != 1 {
			t.Fatalf("provider runs %v pods while the URL fails, want 1", n)
		}
		time.Sleep(200 * time.Millisecond)
	}
	failing.Store(false)
	if again := a.runningMirror("fromurl", "nginx:1"); again.UID != m.UID {
		t.Errorf("mirror replaced after the URL came back")
	}
	if n := a.metric("vk_static_provider_call_duration_seconds_count", `call="CreatePod"`); n != 1 {
		t.Errorf("CreatePod calls = %v, want 1", n)
	}
}
