package nodecert

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	k8stesting "k8s.io/client-go/testing"
	testingclock "k8s.io/utils/clock/testing"
)

// startWaiting creates a pending request named name and waits for it in the background; the
// result arrives on the returned channel.
type waitResult struct {
	cert []byte
	err  error
}

func startWaiting(t *testing.T, ctx context.Context, client CSRClient, name string) <-chan waitResult {
	t.Helper()
	return startWaitingOn(t, ctx, client, name, testingclock.NewFakeClock(time.Now()))
}

// startWaitingOn is startWaiting with the wait's pauses on clk.
func startWaitingOn(t *testing.T, ctx context.Context, client CSRClient, name string, clk *testingclock.FakeClock) <-chan waitResult {
	t.Helper()
	csr, err := client.Create(ctx, &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	require.NoError(t, err)
	done := make(chan waitResult, 1)
	go func() {
		cert, err := waitForCertificate(ctx, client, csr, clk)
		done <- waitResult{cert, err}
	}()
	return done
}

func result(t *testing.T, done <-chan waitResult) waitResult {
	t.Helper()
	select {
	case r := <-done:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("waitForCertificate did not return")
		return waitResult{}
	}
}

// watching waits until the client has opened n watches.
func watching(t *testing.T, client interface{ Actions() []k8stesting.Action }, n int) {
	t.Helper()
	require.Eventually(t, func() bool {
		c := 0
		for _, a := range client.Actions() {
			if a.GetVerb() == "watch" {
				c++
			}
		}
		return c >= n
	}, 10*time.Second, time.Millisecond, "watch %d opened", n)
}

// TestWaitApprovedThroughTheWatch: a pending request is watched; an approval without a
// certificate is not the end, the certificate issued afterwards is.
func TestWaitApprovedThroughTheWatch(t *testing.T) {
	client := newFakeClientset()
	ctx := context.Background()
	done := startWaiting(t, ctx, client.CertificatesV1().CertificateSigningRequests(), "req")
	watching(t, client, 1)
	approve(t, client, "req", nil)
	select {
	case r := <-done:
		t.Fatalf("returned on an approval without a certificate: %v", r.err)
	default:
	}
	approve(t, client, "req", []byte("issued"))
	r := result(t, done)
	require.NoError(t, r.err)
	assert.Equal(t, []byte("issued"), r.cert)
	assert.Equal(t, 0, count(client, "list"), "no list: get and watch are enough")
}

// TestWaitDenied: a denial seen through the watch ends the wait with ErrDenied and the reason.
func TestWaitDenied(t *testing.T) {
	client := newFakeClientset()
	done := startWaiting(t, context.Background(), client.CertificatesV1().CertificateSigningRequests(), "req")
	watching(t, client, 1)
	deny(t, client, "req")
	r := result(t, done)
	require.ErrorIs(t, r.err, ErrDenied)
	assert.ErrorContains(t, r.err, `req: Denied, reason "Nope", message "not you"`)
}

// TestWaitAlreadyIssued: a request found issued (an agent restarted after approval) returns at
// once, without a watch.
func TestWaitAlreadyIssued(t *testing.T) {
	client := newFakeClientset()
	csrs := client.CertificatesV1().CertificateSigningRequests()
	_, err := csrs.Create(context.Background(), &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: "req"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	approve(t, client, "req", []byte("issued"))
	csr, err := csrs.Get(context.Background(), "req", metav1.GetOptions{})
	require.NoError(t, err)
	cert, err := waitForCertificate(context.Background(), csrs, csr, testingclock.NewFakeClock(time.Now()))
	require.NoError(t, err)
	assert.Equal(t, []byte("issued"), cert)
	assert.Equal(t, 0, count(client, "watch"))
}

// TestWaitRewatchesAClosedWatch: the API server ends watches after a while; the wait reads the
// request again and watches anew, at once.
func TestWaitRewatchesAClosedWatch(t *testing.T) {
	client := newFakeClientset()
	first := watch.NewFake()
	var opened bool
	client.PrependWatchReactor("certificatesigningrequests", func(k8stesting.Action) (bool, watch.Interface, error) {
		if opened {
			return false, nil, nil // the tracker's watch
		}
		opened = true
		return true, first, nil
	})
	clk := testingclock.NewFakeClock(time.Now())
	done := startWaitingOn(t, context.Background(), client.CertificatesV1().CertificateSigningRequests(), "req", clk)
	watching(t, client, 1)
	gets := count(client, "get")
	clk.Step(usefulWatch) // the API server's timeout
	first.Stop()
	watching(t, client, 2)
	assert.Greater(t, count(client, "get"), gets, "read again before watching again")
	approve(t, client, "req", []byte("issued"))
	r := result(t, done)
	require.NoError(t, r.err)
	assert.Equal(t, []byte("issued"), r.cert)
}

// TestWaitDeletedOrReplaced: a request deleted, or replaced by another of the same name, ends
// the wait with an error that is not ErrDenied (the next attempt makes a new one).
func TestWaitDeletedOrReplaced(t *testing.T) {
	t.Run("deleted", func(t *testing.T) {
		client := newFakeClientset()
		done := startWaiting(t, context.Background(), client.CertificatesV1().CertificateSigningRequests(), "req")
		watching(t, client, 1)
		require.NoError(t, client.CertificatesV1().CertificateSigningRequests().Delete(context.Background(), "req", metav1.DeleteOptions{}))
		r := result(t, done)
		require.ErrorContains(t, r.err, "deleted")
		assert.NotErrorIs(t, r.err, ErrDenied)
	})
	t.Run("replaced", func(t *testing.T) {
		client := newFakeClientset()
		done := startWaiting(t, context.Background(), client.CertificatesV1().CertificateSigningRequests(), "req")
		watching(t, client, 1)
		csrs := client.CertificatesV1().CertificateSigningRequests()
		csr, err := csrs.Get(context.Background(), "req", metav1.GetOptions{})
		require.NoError(t, err)
		csr.UID = "another"
		_, err = csrs.Update(context.Background(), csr, metav1.UpdateOptions{})
		require.NoError(t, err)
		r := result(t, done)
		require.ErrorContains(t, r.err, "replaced")
	})
}

// TestWaitEndsWithTheContext: the wait returns the context's error when it ends.
func TestWaitEndsWithTheContext(t *testing.T) {
	client := newFakeClientset()
	ctx, cancel := context.WithCancel(context.Background())
	done := startWaiting(t, ctx, client.CertificatesV1().CertificateSigningRequests(), "req")
	watching(t, client, 1)
	cancel()
	require.ErrorIs(t, result(t, done).err, context.Canceled)
}

// TestWaitBacksOffWatchesThatEndAtOnce: a watch that ends at once without an event (a proxy
// that cuts long requests) is read and watched again after a pause that doubles, not in a
// hot loop against the API server.
func TestWaitBacksOffWatchesThatEndAtOnce(t *testing.T) {
	client := newFakeClientset()
	var cut atomic.Bool
	cut.Store(true)
	client.PrependWatchReactor("certificatesigningrequests", func(k8stesting.Action) (bool, watch.Interface, error) {
		if !cut.Load() {
			return false, nil, nil // the tracker's watch
		}
		w := watch.NewFake()
		w.Stop() // closed before it is read: no event
		return true, w, nil
	})
	clk := testingclock.NewFakeClock(time.Now())
	done := startWaitingOn(t, context.Background(), client.CertificatesV1().CertificateSigningRequests(), "req", clk)
	paused := func(watches int) {
		t.Helper()
		watching(t, client, watches)
		require.Eventually(t, clk.HasWaiters, 10*time.Second, time.Millisecond, "paused after watch %d", watches)
		assert.Equal(t, watches, count(client, "watch"), "no watch during the pause")
	}
	paused(1)
	clk.Step(time.Second)
	paused(2)
	clk.Step(time.Second)
	assert.Equal(t, 2, count(client, "watch"), "the second pause is 2 s")
	clk.Step(time.Second)
	paused(3)
	clk.Step(3 * time.Second)
	assert.Equal(t, 3, count(client, "watch"), "the third pause is 4 s")

	cut.Store(false)
	clk.Step(time.Second)
	watching(t, client, 4)
	approve(t, client, "req", []byte("issued"))
	r := result(t, done)
	require.NoError(t, r.err)
	assert.Equal(t, []byte("issued"), r.cert)
}
