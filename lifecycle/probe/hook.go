package probe

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// ErrSleepCut is a sleep hook ended by its context before its seconds were up: for preStop,
// the grace period ran out or the container ended.
var ErrSleepCut = errors.New("container terminated before sleep hook finished")

// RunHook runs a postStart or preStop handler once, as the kubelet's handler runner, and on
// failure returns the kubelet's message for the FailedPostStartHook / FailedPreStopHook event
// with the error. ctx bounds it (the kubelet gives hooks no timeout of their own: preStop is
// bounded by the grace period, which the caller puts on ctx).
//
//   - exec: the command as written (no $(VAR) expansion) through t.Exec; a non-zero exit fails
//     (an *ExitError).
//   - httpGet: one GET; only a request that gets no response fails — the status code is not
//     looked at. An https hook answered in plain HTTP is retried over http, as the kubelet does
//     (reported through t.Warn as LifecycleHTTPFallback).
//   - sleep: waits sleep.seconds on clk; ErrSleepCut when ctx ends first.
//   - tcpSocket: fails with ErrNoHandler — the API keeps the deprecated field unvalidated, and
//     the kubelet fails such hooks at runtime.
func RunHook(ctx context.Context, clk clock.Clock, h *corev1.LifecycleHandler, t Target) (string, error) {
	logger := klog.FromContext(ctx)
	if h == nil {
		h = &corev1.LifecycleHandler{}
	}
	switch {
	case h.Exec != nil:
		output, err := execHook(ctx, h.Exec.Command, t)
		if err != nil {
			logger.V(1).Info("Exec lifecycle hook failed", "command", h.Exec.Command, "container", t.Container, "pod", t.Pod, "output", string(output), "err", err)
			return fmt.Sprintf("Exec lifecycle hook (%v) for Container %q in Pod %q failed - error: %v, message: %q", h.Exec.Command, t.Container, t.Pod, err, string(output)), err
		}
		return "", nil
	case h.HTTPGet != nil:
		if err := httpHook(ctx, h.HTTPGet, t); err != nil {
			logger.V(1).Info("HTTP lifecycle hook failed", "path", h.HTTPGet.Path, "container", t.Container, "pod", t.Pod, "err", err)
			return fmt.Sprintf("HTTP lifecycle hook (%s) for Container %q in Pod %q failed - error: %v", h.HTTPGet.Path, t.Container, t.Pod, err), err
		}
		return "", nil
	case h.Sleep != nil:
		if err := sleepHook(ctx, clk, h.Sleep.Seconds); err != nil {
			logger.V(1).Info("Sleep lifecycle hook failed", "seconds", h.Sleep.Seconds, "container", t.Container, "pod", t.Pod, "err", err)
			return fmt.Sprintf("Sleep lifecycle hook (%d) for Container %q in Pod %q failed - error: %v", h.Sleep.Seconds, t.Container, t.Pod, err), err
		}
		return "", nil
	default:
		err := fmt.Errorf("%w: %v", ErrNoHandler, h)
		logger.Error(err, "Cannot run lifecycle hook", "container", t.Container, "pod", t.Pod)
		return fmt.Sprintf("Cannot run handler: %v", err), err
	}
}

// execHook runs a hook's command; a non-zero exit is an *ExitError.
func execHook(ctx context.Context, cmd []string, t Target) ([]byte, error) {
	if t.Exec == nil {
		return nil, ErrExecUnsupported
	}
	output, code, err := t.Exec(ctx, cmd)
	if err != nil {
		return output, err
	}
	if code != 0 {
		return output, &ExitError{Command: cmd, Code: code, Output: output}
	}
	return output, nil
}

// sleepHook waits seconds on clk, or until ctx ends.
func sleepHook(ctx context.Context, clk clock.Clock, seconds int64) error {
	if seconds <= 0 {
		return nil
	}
	timer := clk.NewTimer(time.Duration(seconds) * time.Second)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ErrSleepCut
	case <-timer.C():
		return nil
	}
}

// newHookClient is the kubelet's insecureContainerLifecycleHTTPClient: TLS without verification,
// same-host redirects, no proxy, no timeout of its own. Keep-alives are off since every hook gets
// its own client here, so nothing is left open after it.
func newHookClient() *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // as the kubelet
			DisableKeepAlives: true,
		},
		CheckRedirect: sameHostRedirects,
	}
}

// httpHook sends a hook's GET; only the request's own failure is the hook's failure.
func httpHook(ctx context.Context, action *corev1.HTTPGetAction, t Target) error {
	req, err := newHTTPRequest(ctx, action, t, "lifecycle")
	if err != nil {
		return err
	}
	client := newHookClient()
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	discardBody(resp)
	if !isPlainHTTPAnswer(err) {
		return err
	}
	// An https hook on a server speaking plain HTTP: the kubelet retries over http, without the
	// Authorization header, and reports the fallback.
	klog.FromContext(ctx).V(1).Info("HTTPS lifecycle hook got an HTTP response, retrying with HTTP", "pod", t.Pod, "host", req.URL.Host, "err", err)
	retry := req.Clone(ctx)
	retry.URL.Scheme = "http"
	retry.Header.Del("Authorization")
	resp, retryErr := client.Do(retry)
	discardBody(resp)
	if retryErr != nil {
		return err
	}
	if t.Warn != nil {
		t.Warn("LifecycleHTTPFallback", fmt.Sprintf("request to HTTPS lifecycle hook %s got HTTP response, retry with HTTP succeeded", retry.URL.Host))
	}
	return nil
}

// isPlainHTTPAnswer tells Go's error for an HTTPS request answered in plain HTTP.
func isPlainHTTPAnswer(err error) bool {
	var urlErr *url.Error
	return err != nil && errors.As(err, &urlErr) && strings.Contains(urlErr.Err.Error(), "server gave HTTP response to HTTPS client")
}

// discardBody reads a small body to its end, as the kubelet, and closes it.
func discardBody(resp *http.Response) {
	if resp == nil {
		return
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.ContentLength <= maxResponseBody {
		_, _ = io.Copy(io.Discard, &io.LimitedReader{R: resp.Body, N: maxResponseBody})
	}
}
