package testenv

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// LeakCheckedNodeClient is a clientset with the identity system:node:<name> (its config too),
// for a test that checks the goroutines its agent or controller leaves behind. The clientset has
// an HTTP client of its own, so that its connections can be closed before the check; the shared
// admin client's connection, which outlives the test, is opened before the baseline is taken.
//
// Call verifyNoLeaks once everything that used the clientset has stopped: it closes the idle
// connections until no goroutine is left beyond the baseline (a connection whose last request
// was cancelled becomes idle a little later), waiting at most within, and fails t if one is.
func (e *Env) LeakCheckedNodeClient(t *testing.T, name string, within time.Duration) (cfg *rest.Config, cs kubernetes.Interface, verifyNoLeaks func()) {
	t.Helper()
	if _, err := e.Admin.CoreV1().Namespaces().Get(context.Background(), metav1.NamespaceDefault, metav1.GetOptions{}); err != nil {
		t.Fatalf("admin client: %v", err)
	}
	baseline := goleak.IgnoreCurrent()
	cfg, err := e.NodeConfig(name)
	if err != nil {
		t.Fatalf("node config for %s: %v", name, err)
	}
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatalf("HTTP client for %s: %v", name, err)
	}
	if cs, err = kubernetes.NewForConfigAndClient(cfg, httpClient); err != nil {
		t.Fatalf("node client for %s: %v", name, err)
	}
	return cfg, cs, func() {
		t.Helper()
		assert.Eventually(t, func() bool {
			utilnet.CloseIdleConnectionsFor(httpClient.Transport)
			return goleak.Find(baseline) == nil
		}, within, 50*time.Millisecond)
		goleak.VerifyNone(t, baseline)
	}
}
