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
)

// rewatchDelay is the pause before reading the request again after a read or watch failed (an
// API server restarting, a connection reset), as client-go's csr.WaitForCertificate's.
const rewatchDelay = time.Second

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
	for {
		if current != nil {
			if cert, done, err := issued(current, uid); done || err != nil {
				return cert, err
			}
			cert, done, err := watchUntilIssued(ctx, client, name, uid, current.ResourceVersion, clk)
			if done || err != nil {
				return cert, err
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
			logger.V(2).Info("Reading the certificate signing request failed, retrying", "csr", name, "err", err)
			current = nil
			pause(ctx, clk, rewatchDelay)
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
// deleted or replaced (err), or the watch ends (neither: read it again). A watch that cannot
// be opened, or ends in an error, is retried after rewatchDelay on clk.
func watchUntilIssued(ctx context.Context, client CSRClient, name string, uid types.UID, resourceVersion string, clk clock.Clock) ([]byte, bool, error) {
	w, err := client.Watch(ctx, metav1.ListOptions{
		FieldSelector:   fields.OneTermEqualSelector("metadata.name", name).String(),
		ResourceVersion: resourceVersion,
	})
	if err != nil {
		klog.FromContext(ctx).V(2).Info("Watching the certificate signing request failed, retrying", "csr", name, "err", err)
		pause(ctx, clk, rewatchDelay)
		return nil, false, nil
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, false, nil
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil, false, nil
			}
			switch ev.Type {
			case watch.Added, watch.Modified:
			case watch.Deleted:
				return nil, false, fmt.Errorf("certificate signing request %s was deleted", name)
			default: // an error, 410 Gone among them: read it again
				klog.FromContext(ctx).V(2).Info("Watching the certificate signing request ended in an error, retrying", "csr", name, "event", ev.Object)
				pause(ctx, clk, rewatchDelay)
				return nil, false, nil
			}
			csr, ok := ev.Object.(*certificatesv1.CertificateSigningRequest)
			if !ok || csr.Name != name {
				continue // a watch that ignores the field selector (a fake) may send others
			}
			if cert, done, err := issued(csr, uid); done || err != nil {
				return cert, done, err
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
