package nodecert

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"
	certutil "k8s.io/client-go/util/cert"
	testingclock "k8s.io/utils/clock/testing"
)

// managerTest is a manager of a client certificate on a fake clock, with a fake API server
// whose requests the test issues.
type managerTest struct {
	t      *testing.T
	client *fake.Clientset
	clk    *testingclock.FakeClock
	ca     *testCA
	store  *store
	m      *Manager
	done   chan error
	cancel context.CancelFunc
}

func newManagerTest(t *testing.T, bootstrapCert, bootstrapKey []byte, setup func(*managerTest)) *managerTest {
	t.Helper()
	mt := &managerTest{t: t, client: newFakeClientset(), clk: testingclock.NewFakeClock(time.Now()), ca: newTestCA(t)}
	var err error
	mt.store, err = newStore(t.TempDir(), ClientPairName, mt.clk)
	require.NoError(t, err)
	if setup != nil {
		setup(mt)
	}
	mt.m, err = newManager(context.Background(), managerConfig{
		name: ClientPairName, template: &x509.CertificateRequest{Subject: nodeSubject("a")},
		signer: certificatesv1.KubeAPIServerClientKubeletSignerName, usages: clientUsages, store: mt.store,
		clientFor: func(*tls.Certificate) (CSRClient, error) {
			return mt.client.CertificatesV1().CertificateSigningRequests(), nil
		},
		bootstrapCertPEM: bootstrapCert, bootstrapKeyPEM: bootstrapKey,
		clock: mt.clk,
	})
	require.NoError(t, err)
	mt.m.randFloat = func() float64 { return 0.5 } // renew at 80 %
	return mt
}

func (mt *managerTest) run() {
	ctx, cancel := context.WithCancel(context.Background())
	mt.cancel, mt.done = cancel, make(chan error, 1)
	go func() { mt.done <- mt.m.Run(ctx) }()
	mt.t.Cleanup(mt.stop)
}

func (mt *managerTest) stop() {
	if mt.cancel == nil {
		return
	}
	mt.cancel()
	mt.cancel = nil
	select {
	case err := <-mt.done:
		assert.NoError(mt.t, err)
	case <-time.After(10 * time.Second):
		mt.t.Fatal("Run did not return when its context ended")
	}
}

// issue waits for request number n and issues it for lifetime from the fake clock's now.
func (mt *managerTest) issue(n int, lifetime time.Duration) {
	mt.t.Helper()
	require.Eventually(mt.t, func() bool { return count(mt.client, "create") >= n }, 10*time.Second, time.Millisecond, "request %d", n)
	list, err := mt.client.CertificatesV1().CertificateSigningRequests().List(context.Background(), metav1.ListOptions{})
	require.NoError(mt.t, err)
	for _, csr := range list.Items {
		if len(csr.Status.Certificate) == 0 {
			now := mt.clk.Now()
			approve(mt.t, mt.client, csr.Name, mt.ca.sign(mt.t, csr.Spec.Request, now, now.Add(lifetime)))
			return
		}
	}
	mt.t.Fatal("no pending request")
}

// waiting waits until Run waits on the clock.
func (mt *managerTest) waiting() {
	mt.t.Helper()
	require.Eventually(mt.t, mt.clk.HasWaiters, 10*time.Second, time.Millisecond, "waiting on the clock")
}

// current waits for the manager's current certificate to have serial number issued by ca,
// and returns it.
func (mt *managerTest) currentIssued() *tls.Certificate {
	mt.t.Helper()
	var cur *tls.Certificate
	require.Eventually(mt.t, func() bool {
		cur = mt.m.Current()
		return cur != nil && cur.Leaf.Issuer.CommonName == "test-ca"
	}, 10*time.Second, time.Millisecond)
	return cur
}

// TestManagerRenewsAtTheDeadline: without a certificate the manager requests one at once; it
// renews it at the deadline (80 % here) and not before, with a new key, and stores each.
func TestManagerRenewsAtTheDeadline(t *testing.T) {
	mt := newManagerTest(t, nil, nil, nil)
	assert.Nil(t, mt.m.Current(), "nothing yet")
	mt.run()
	mt.issue(1, 100*time.Hour)
	first := mt.currentIssued()
	assert.Equal(t, "system:node:a", first.Leaf.Subject.CommonName)
	stored, err := mt.store.Current()
	require.NoError(t, err)
	assert.Equal(t, first.Leaf.SerialNumber, stored.Leaf.SerialNumber, "stored")

	mt.waiting()
	mt.clk.Step(79 * time.Hour)
	assert.Equal(t, 1, count(mt.client, "create"), "no renewal before 80 %")
	mt.clk.Step(time.Hour)
	mt.issue(2, 100*time.Hour)
	require.Eventually(t, func() bool {
		cur := mt.m.Current()
		return cur != nil && cur.Leaf.SerialNumber.Cmp(first.Leaf.SerialNumber) != 0
	}, 10*time.Second, time.Millisecond, "renewed")
	second := mt.m.Current()
	assert.NotEqual(t, first.Leaf.PublicKey, second.Leaf.PublicKey, "a new key")
	stored, err = mt.store.Current()
	require.NoError(t, err)
	assert.Equal(t, second.Leaf.SerialNumber, stored.Leaf.SerialNumber)
	mt.stop()
}

// TestManagerRetriesAFailedRenewal: a request the API server refuses is sent again after the
// back-off (2 s, up to a tenth more), not before.
func TestManagerRetriesAFailedRenewal(t *testing.T) {
	mt := newManagerTest(t, nil, nil, nil)
	failed := false
	mt.client.PrependReactor("create", "certificatesigningrequests", func(k8stesting.Action) (bool, runtime.Object, error) {
		if !failed {
			failed = true
			return true, nil, errors.New("connection refused")
		}
		return false, nil, nil
	})
	mt.run()
	mt.waiting()
	assert.Equal(t, 1, count(mt.client, "create"))
	mt.clk.Step(1900 * time.Millisecond)
	assert.Equal(t, 1, count(mt.client, "create"), "no retry before 2 s")
	mt.clk.Step(300 * time.Millisecond)
	mt.issue(2, time.Hour)
	mt.currentIssued()
	mt.stop()
}

// TestManagerBootstrapPair: with an empty store, the bootstrap pair (the kubeconfig's) is
// current and stored at once, and renewed at once.
func TestManagerBootstrapPair(t *testing.T) {
	certPEM, keyPEM := pair(t, "system:node:a", time.Now().Add(time.Hour))
	mt := newManagerTest(t, certPEM, keyPEM, nil)
	cur := mt.m.Current()
	require.NotNil(t, cur)
	assert.Equal(t, "system:node:a", cur.Leaf.Subject.CommonName)
	stored, err := mt.store.Current()
	require.NoError(t, err)
	assert.Equal(t, cur.Leaf.SerialNumber, stored.Leaf.SerialNumber)

	mt.run()
	mt.issue(1, time.Hour)
	mt.currentIssued()
	mt.stop()
}

// TestManagerKeepsAStoredPair: a stored pair that has not expired (and names the node as the
// template asks) is used as it is until its deadline, and Current stops returning it once it
// expires.
func TestManagerKeepsAStoredPair(t *testing.T) {
	var serial string
	mt := newManagerTest(t, nil, nil, func(mt *managerTest) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		require.NoError(t, err)
		der, err := x509.MarshalECPrivateKey(key)
		require.NoError(t, err)
		subject := nodeSubject("a")
		csrPEM, err := certutil.MakeCSR(key, &subject, nil, nil)
		require.NoError(t, err)
		now := mt.clk.Now()
		certPEM := mt.ca.sign(t, csrPEM, now.Add(-time.Minute), now.Add(time.Hour))
		cert, err := mt.store.Update(certPEM, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}))
		require.NoError(t, err)
		serial = cert.Leaf.SerialNumber.String()
	})
	cur := mt.m.Current()
	require.NotNil(t, cur)
	assert.Equal(t, serial, cur.Leaf.SerialNumber.String())
	mt.run()
	mt.waiting()
	assert.Equal(t, 0, count(mt.client, "create"), "no request before the deadline")
	mt.stop()
	mt.clk.Step(2 * time.Hour)
	assert.Nil(t, mt.m.Current(), "expired")
}

// TestManagerIssuedShortIsRenewedAtItsDeadline: a certificate issued without all the request
// asked for (here without the organization) is used until its deadline, not asked for again
// at once: the signer would answer the same, request after request.
func TestManagerIssuedShortIsRenewedAtItsDeadline(t *testing.T) {
	mt := newManagerTest(t, nil, nil, nil)
	mt.run()
	require.Eventually(t, func() bool { return count(mt.client, "create") >= 1 }, 10*time.Second, time.Millisecond)
	list, err := mt.client.CertificatesV1().CertificateSigningRequests().List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, list.Items, 1)
	req, err := parseRequest(list.Items[0].Spec.Request)
	require.NoError(t, err)
	now := mt.clk.Now()
	der, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{
		SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: req.Subject.CommonName},
		NotBefore: now, NotAfter: now.Add(100 * time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, mt.ca.cert, req.PublicKey, mt.ca.key)
	require.NoError(t, err)
	approve(t, mt.client, list.Items[0].Name, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	short := mt.currentIssued()
	assert.Empty(t, short.Leaf.Subject.Organization)

	mt.waiting()
	assert.Equal(t, 1, count(mt.client, "create"), "not asked for again at once")
	mt.clk.Step(79 * time.Hour)
	assert.Equal(t, 1, count(mt.client, "create"), "nor before its deadline")
	mt.clk.Step(time.Hour)
	mt.issue(2, 100*time.Hour)
	require.Eventually(t, func() bool {
		cur := mt.m.Current()
		return cur != nil && len(cur.Leaf.Subject.Organization) == 1
	}, 10*time.Second, time.Millisecond, "renewed at its deadline")
	mt.stop()
}

// TestClientManagerRenewsWithThePairInMemory: the renewal's request authenticates with the pair
// the manager holds, not with whatever the file at the current path holds by then (here
// another pair written there behind its back; as well a file an operator's clean-up removed).
func TestClientManagerRenewsWithThePairInMemory(t *testing.T) {
	presented := make(chan string, 1)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cn := ""
		if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
			cn = r.TLS.PeerCertificates[0].Subject.CommonName
		}
		select {
		case presented <- cn:
		default:
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403}`))
	}))
	srv.TLS = &tls.Config{ClientAuth: tls.RequireAnyClientCert}
	srv.StartTLS()
	defer srv.Close()

	certDir := t.TempDir()
	certPEM, keyPEM := pair(t, "system:node:a", time.Now().Add(time.Hour))
	kubeconfig := &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{
		CAData:   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}),
		CertData: certPEM, KeyData: keyPEM,
	}}
	m, err := NewClientManager(context.Background(), kubeconfig, certDir, "a")
	require.NoError(t, err)
	require.Equal(t, "system:node:a", m.Current().Leaf.Subject.CommonName)

	other, err := newStore(certDir, ClientPairName, testingclock.NewFakePassiveClock(time.Now()))
	require.NoError(t, err)
	otherCert, otherKey := pair(t, "system:node:other", time.Now().Add(time.Hour))
	_, err = other.Update(otherCert, otherKey)
	require.NoError(t, err)

	client, err := m.clientFor(m.Current())
	require.NoError(t, err)
	_, err = client.Create(context.Background(), &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
	require.Error(t, err, "the server refuses every request")
	select {
	case cn := <-presented:
		assert.Equal(t, "system:node:a", cn, "the pair in memory")
	case <-time.After(10 * time.Second):
		t.Fatal("no request reached the server")
	}
}
