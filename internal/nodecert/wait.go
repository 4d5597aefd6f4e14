package nodecert

import (
	"context"
	"fmt"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/vk-static/vk-static/backoff"
)

// rewatchRetry is the pause before reading the request again after a read or watch failed (an
// API server restarting, a connection reset) or a watch ended without telling anything: 1 s
// (client-go's csr.WaitForCertificate's) the first time, doubling while it goes on, up to 32 s.
// A constant pause would do for an API server that refuses; one that accepts watches and ends
// them at once (a proxy in between that cuts long requests, a watch cache not ready) would
// otherwise be read and watched again with no pause at all, a hot loop against it.
var rewatchRetry = backoff.Policy{Initial: time.Second, Max: 32 * time.Second}

// usefulWatch is how long a watch that ended without an event must have lasted to count as
// one that worked: the API server ends every watch after its timeout (minutes), and the wait
// watches again at once then. A watch that ends sooner with nothing is treated as a failure.
const usefulWatch = time.Minute

// waitForCertificate waits until the request csr (as created or found) is issued and returns
// its certificate, or an error wrapping ErrDenied when it is denied or failed, or one when it
// is deleted or replaced (another UID), or ctx's when ctx ends.
//
// It reads the request, then watches it from the version read; when the watch ends (the API
// server closes watches after a while, or the version is too old: 410 Gone) it reads it again
// and watches anew. No List: the one object is all it needs, and Get and Watch are what the
// API server's node authorizer and the bootstrap token's role allow.
func waitForCertificate(ctx context.Context, client CSRClient, csr *certificatesv1.CertificateSigningRequest, clk clock.Clock) ([]byte, error) {
	logger := klog.FromContext(ctx)
	name, uid := csr.Name, csr.UID
	current := csr
	delays := rewatchRetry.Start()
	for {
		if current != nil {
			if cert, done, err := issued(current, uid); done || err != nil {
				return cert, err
			}
			cert, done, useful, err := watchUntilIssued(ctx, client, name, uid, current.ResourceVersion, clk)
			if done || err != nil {
				return cert, err
			}
			if useful {
				delays.Reset()
			} else {
				pause(ctx, clk, delays.Next())
			}
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("wait for certificate signing request %s: %w", name, err)
		}
		var err error
		current, err = client.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("certificate signing request %s was deleted", name)
		}
		if err != nil {
			wait := delays.Next()
			logger.V(2).Info("Reading the certificate signing request failed, retrying", "csr", name, "err", err, "retryIn", wait)
			current = nil
			pause(ctx, clk, wait)
		}
	}
}

// pause waits d on clk, or until ctx ends.
func pause(ctx context.Context, clk clock.Clock, d time.Duration) {
	t := clk.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C():
	}
}

// watchUntilIssued watches the request from resourceVersion until it is issued (done), denied,
// deleted or replaced (err), or the watch ends (neither: read it again). useful tells whether
// the watch worked — it brought an event, or lasted usefulWatch on clk before the API server
// ended it — so that the caller reads and watches again at once; else (it could not be opened,
// ended in an error or at once with nothing) the caller pauses first.
func watchUntilIssued(ctx context.Context, client CSRClient, name string, uid types.UID, resourceVersion string, clk clock.Clock) (cert []byte, done, useful bool, err error) {
	logger := klog.FromContext(ctx)
	opened := clk.Now()
	w, err := client.Watch(ctx, metav1.ListOptions{
		FieldSelector:   fields.OneTermEqualSelector("metadata.name", name).String(),
		ResourceVersion: resourceVersion,
	})
	if err != nil {
		logger.V(2).Info("Watching the certificate signing request failed, retrying", "csr", name, "err", err)
		return nil, false, false, nil
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, false, true, nil
		case ev, ok := <-w.ResultChan():
			if !ok {
				useful = useful || clk.Since(opened) >= usefulWatch
				if !useful {
					logger.V(2).Info("The watch of the certificate signing request ended early without an event, retrying", "csr", name)
				}
				return nil, false, useful, nil
			}
			switch ev.Type {
			case watch.Added, watch.Modified:
			case watch.Deleted:
				return nil, false, true, fmt.Errorf("certificate signing request %s was deleted", name)
			default: // an error, 410 Gone among them: read it again
				logger.V(2).Info("Watching the certificate signing request ended in an error, retrying", "csr", name, "event", ev.Object)
				return nil, false, false, nil
			}
			useful = true
			csr, ok := ev.Object.(*certificatesv1.CertificateSigningRequest)
			if !ok || csr.Name != name {
				continue // a watch that ignores the field selector (a fake) may send others
			}
			if cert, done, err := issued(csr, uid); done || err != nil {
				return cert, done, true, err
			}
		}
	}
}

// issued is the request's certificate (done) once it is approved and signed, an error wrapping
// ErrDenied once it is denied or failed, or an error if it is another request of the same name
// (deleted and created again by someone else).
func issued(csr *certificatesv1.CertificateSigningRequest, uid types.UID) ([]byte, bool, error) {
	if csr.UID != uid {
		return nil, false, fmt.Errorf("certificate signing request %s was replaced (UID %s, not %s)", csr.Name, csr.UID, uid)
	}
	if why := denial(csr); why != "" {
		return nil, false, fmt.Errorf("%w: %s: %s", ErrDenied, csr.Name, why)
	}
	for _, c := range csr.Status.Conditions {
		if c.Type == certificatesv1.CertificateApproved && c.Status != "False" && len(csr.Status.Certificate) > 0 {
			return csr.Status.Certificate, true, nil
		}
	}
	return nil, false, nil
}

// denial is why the request was denied or failed, "" if it was not.
func denial(csr *certificatesv1.CertificateSigningRequest) string {
	for _, c := range csr.Status.Conditions {
		if (c.Type == certificatesv1.CertificateDenied || c.Type == certificatesv1.CertificateFailed) && c.Status != "False" {
			return fmt.Sprintf("%s, reason %q, message %q", c.Type, c.Reason, c.Message)
		}
	}
	return ""
}
