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

// TestAPIServerOutage: while the API server is down nothing running is deleted or restarted,
// static-pod changes still take effect locally, and everything converges once it is back.
// It must run alone: it stops the package's shared API server.
func TestAPIServerOutage(t *testing.T) {
	a := startAgent(t, agentOptions{})
	ctx := context.Background()
	ns := env.Namespace(t)
	a.WriteManifest("web.yaml", manifest("web", "nginx:1"))
	if _, err := env.Admin.CoreV1().Pods(ns).Create(ctx, apiPod("api", a.Node), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	a.runningMirror("web", "nginx:1")
	eventually(t, 10*time.Second, "two provider pods", func() error {
		if n := a.metric("vk_static_provider_pods"); n != 2 {
			return fmt.Errorf("%v", n)
		}
		return nil
	})

	env.StopAPIServer()
	outage := time.Now()
	a.WriteManifest("web.yaml", manifest("web", "nginx:2")) // must take effect without the API server
	eventually(t, 10*time.Second, "the edit applied locally", func() error {
		creates := a.metric("vk_static_provider_call_duration_seconds_count", `call="CreatePod"`)
		deletes := a.metric("vk_static_provider_call_duration_seconds_count", `call="DeletePod"`)
		if creates != 3 || deletes != 1 {
			return fmt.Errorf("CreatePod %v DeletePod %v, want 3 and 1", creates, deletes)
		}
		return nil
	})
	for time.Since(outage) < 30*time.Second {
		if n := a.metric("vk_static_provider_pods"); n != 2 {
			t.Fatalf("provider runs %v pods during the outage, want 2", n)
		}
		time.Sleep(time.Second) // sampling during the outage, not waiting for a result
	}
	if err := env.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	back := time.Now()

	eventually(t, 10*time.Second, "mirror of the edited pod", func() error {
		p, err := env.Admin.CoreV1().Pods("default").Get(ctx, "web-"+a.Node, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Spec.Containers[0].Image != "nginx:2" || p.Status.Phase != corev1.PodRunning {
			return fmt.Errorf("image %s phase %s", p.Spec.Containers[0].Image, p.Status.Phase)
		}
		return nil
	})
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
	if err != nil || p.Status.Phase != corev1.PodRunning {
		t.Errorf("API pod after the outage: %v %v", err, p.Status.Phase)
	}
	if n := a.metric("vk_static_provider_pods"); n != 2 {
		t.Errorf("provider runs %v pods after the outage, want 2", n)
	}
	t.Logf("converged %s after the API server returned", time.Since(back))
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
