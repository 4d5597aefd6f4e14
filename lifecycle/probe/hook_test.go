package probe

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
)

func hookTarget() Target {
	return Target{Pod: FormatPod("web", "default", "uid-1"), Container: "app"}
}

func TestFormatPod(t *testing.T) {
	assert.Equal(t, "web_default(uid-1)", FormatPod("web", "default", "uid-1"))
}

func TestRunHookExec(t *testing.T) {
	runtimeErr := errors.New("runtime gone")
	tests := []struct {
		name    string
		exec    func(context.Context, []string) ([]byte, int, error)
		wantErr error
		wantMsg string
	}{
		{"exit 0", execReturning("fine", 0, nil, nil), nil, ""},
		{"exit 2", execReturning("oops", 2, nil, nil), &ExitError{},
			`Exec lifecycle hook ([warm $(X)]) for Container "app" in Pod "web_default(uid-1)" failed - error: command 'warm $(X)' exited with 2: oops, message: "oops"`},
		{"runtime error", execReturning("", 0, runtimeErr, nil), runtimeErr,
			`Exec lifecycle hook ([warm $(X)]) for Container "app" in Pod "web_default(uid-1)" failed - error: runtime gone, message: ""`},
		{"no exec", nil, ErrExecUnsupported, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			target := hookTarget()
			target.Exec = tt.exec
			target.Env = []corev1.EnvVar{{Name: "X", Value: "expanded"}}
			h := &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"warm", "$(X)"}}}
			msg, err := RunHook(t.Context(), clock.RealClock{}, h, target)
			switch want := tt.wantErr.(type) {
			case nil:
				require.NoError(t, err)
				assert.Empty(t, msg)
				return
			case *ExitError:
				var exit *ExitError
				require.ErrorAs(t, err, &exit)
				assert.Equal(t, 2, exit.Code)
			default:
				require.ErrorIs(t, err, want)
			}
			if tt.wantMsg != "" {
				assert.Equal(t, tt.wantMsg, msg)
			}
		})
	}
}

func TestRunHookHTTP(t *testing.T) {
	var userAgent string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		userAgent = r.UserAgent()
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer srv.Close()
	target, port := serverTarget(t, srv)
	target.Pod, target.Container = hookTarget().Pod, "app"

	h := &corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/shutdown", Port: intstr.FromInt32(port)}}
	msg, err := RunHook(t.Context(), clock.RealClock{}, h, target)
	require.NoError(t, err, "the kubelet does not look at a hook's status code")
	assert.Empty(t, msg)
	assert.Equal(t, "kube-lifecycle/1.36", userAgent)

	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := int32(l.Addr().(*net.TCPAddr).Port)
	require.NoError(t, l.Close())
	h.HTTPGet.Port = intstr.FromInt32(closed)
	msg, err = RunHook(t.Context(), clock.RealClock{}, h, target)
	require.ErrorContains(t, err, "connection refused")
	assert.Contains(t, msg, `HTTP lifecycle hook (/shutdown) for Container "app" in Pod "web_default(uid-1)" failed - error: `)
}

func TestRunHookHTTPSFallsBackToHTTP(t *testing.T) {
	var auth []string
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		auth = append(auth, r.Header.Get("Authorization"))
	}))
	defer srv.Close()
	target, port := serverTarget(t, srv)
	var warnings []string
	target.Warn = func(reason, message string) { warnings = append(warnings, reason+": "+message) }

	h := &corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{
		Scheme: corev1.URISchemeHTTPS, Port: intstr.FromInt32(port),
		HTTPHeaders: []corev1.HTTPHeader{{Name: "Authorization", Value: "Bearer secret"}},
	}}
	_, err := RunHook(t.Context(), clock.RealClock{}, h, target)
	require.NoError(t, err)
	assert.Equal(t, []string{""}, auth, "the retry over http drops Authorization")
	require.Len(t, warnings, 1)
	assert.Contains(t, warnings[0], "LifecycleHTTPFallback: request to HTTPS lifecycle hook")
}

func TestRunHookSleep(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	h := &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 5}}

	done := make(chan error, 1)
	go func() {
		_, err := RunHook(t.Context(), clk, h, hookTarget())
		done <- err
	}()
	require.Eventually(t, clk.HasWaiters, 5*time.Second, time.Millisecond)
	clk.Step(4 * time.Second)
	select {
	case err := <-done:
		t.Fatalf("sleep hook returned before its seconds: %v", err)
	default:
	}
	clk.Step(time.Second)
	require.NoError(t, <-done)

	// Cut short: preStop's grace period ended.
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		_, err := RunHook(ctx, clk, h, hookTarget())
		done <- err
	}()
	require.Eventually(t, clk.HasWaiters, 5*time.Second, time.Millisecond)
	cancel()
	require.ErrorIs(t, <-done, ErrSleepCut)
}

func TestRunHookSleepMessage(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	msg, err := RunHook(ctx, clocktesting.NewFakeClock(time.Now()), &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 30}}, hookTarget())
	require.ErrorIs(t, err, ErrSleepCut)
	assert.Equal(t, `Sleep lifecycle hook (30) for Container "app" in Pod "web_default(uid-1)" failed - error: container terminated before sleep hook finished`, msg)
}

func TestRunHookTCPSocketFails(t *testing.T) {
	h := &corev1.LifecycleHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(80)}}
	msg, err := RunHook(t.Context(), clock.RealClock{}, h, hookTarget())
	require.ErrorIs(t, err, ErrNoHandler)
	assert.Contains(t, msg, "Cannot run handler: invalid handler")
}

func TestRunHookSleepZero(t *testing.T) {
	// A fake clock that never moves: a zero sleep must not wait on it.
	_, err := RunHook(t.Context(), clocktesting.NewFakeClock(time.Now()), &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{}}, hookTarget())
	require.NoError(t, err)
}

func TestRunHookNilHandler(t *testing.T) {
	_, err := RunHook(t.Context(), clock.RealClock{}, nil, hookTarget())
	require.ErrorIs(t, err, ErrNoHandler)
}
