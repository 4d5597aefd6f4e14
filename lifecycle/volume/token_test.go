package volume

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/vk-static/vk-static/kubeclient/kubeclienttest"
	"github.com/vk-static/vk-static/lifecycle/env"
	"github.com/vk-static/vk-static/nodeobjects"
)

// tokenCall is one TokenRequest the fake API server received.
type tokenCall struct {
	namespace, serviceAccount string
	req                       *authenticationv1.TokenRequest
}

// fakeIssuer answers TokenRequests on a fake clientset as the API server does: a token
// ("token-<n>") that expires expirationSeconds from now, the request's spec echoed.
type fakeIssuer struct {
	clock clock.Clock

	mu    sync.Mutex
	calls []tokenCall
	err   error // the answer to every request while set
}

func (f *fakeIssuer) react(action k8stesting.Action) (bool, runtime.Object, error) {
	create, ok := action.(k8stesting.CreateActionImpl)
	if !ok || action.GetSubresource() != "token" {
		return false, nil, nil
	}
	req := create.GetObject().(*authenticationv1.TokenRequest).DeepCopy()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, tokenCall{namespace: action.GetNamespace(), serviceAccount: create.Name, req: req})
	if f.err != nil {
		return true, nil, f.err
	}
	out := req.DeepCopy()
	out.Status.Token = "token-" + strconv.Itoa(len(f.calls))
	out.Status.ExpirationTimestamp = metav1.NewTime(f.clock.Now().Add(time.Duration(*req.Spec.ExpirationSeconds) * time.Second))
	return true, out, nil
}

func (f *fakeIssuer) requests() []tokenCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]tokenCall(nil), f.calls...)
}

func (f *fakeIssuer) failWith(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err = err
}

// newTokenTestEnv is newTestEnv whose Manager requests tokens through nodeobjects.NewClientTokenRequester
// from a fake clientset answered by the returned issuer, which holds objs and the pod's
// kube-root-ca.crt.
func newTokenTestEnv(t *testing.T, objs ...runtime.Object) (*testEnv, *fakeIssuer) {
	t.Helper()
	objs = append(objs, configMap("kube-root-ca.crt", map[string]string{"ca.crt": "CA PEM"}))
	client := fake.NewClientset(objs...)
	clk := clocktesting.NewFakeClock(testNow)
	issuer := &fakeIssuer{clock: clk}
	client.PrependReactor("create", "serviceaccounts", issuer.react)
	m, err := New(Config{
		PodsDir: filepath.Join(t.TempDir(), "pods"),
		Objects: nodeobjects.NewClientGetter(kubeclienttest.Wrap(client)),
		Tokens:  nodeobjects.NewClientTokenRequester(kubeclienttest.Wrap(client)),
		Clock:   clk,
	})
	require.NoError(t, err)
	return &testEnv{m: m, podsDir: m.podsDir, client: client, clock: clk}, issuer
}

// kubeAPIAccess is the volume the ServiceAccount admission plugin adds to every API pod.
func kubeAPIAccess(token corev1.ServiceAccountTokenProjection, defaultMode *int32) corev1.Volume {
	return vol("kube-api-access-x7k2p", corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		DefaultMode: defaultMode,
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &token},
			{ConfigMap: &corev1.ConfigMapProjection{
				LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
				Items:                []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}},
			}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{
				{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}},
			}}},
		},
	}})
}

const kubeAPIAccessDir = "kubernetes.io~projected/kube-api-access-x7k2p"

func TestServiceAccountTokenSetup(t *testing.T) {
	tests := []struct {
		name           string
		serviceAccount string
		token          corev1.ServiceAccountTokenProjection
		defaultMode    *int32
		wantSA         string
		wantAudiences  []string
		wantExpiration int64
		wantMode       os.FileMode
	}{{
		name:           "as the ServiceAccount admission makes it",
		serviceAccount: "default",
		token:          corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr(int64(3607))},
		defaultMode:    ptr(int32(0o644)),
		wantSA:         "default",
		wantExpiration: 3607,
		wantMode:       0o644,
	}, {
		name:           "an audience, the default expiration, no service account named",
		token:          corev1.ServiceAccountTokenProjection{Path: "token", Audience: "vault"},
		defaultMode:    ptr(int32(0o600)),
		wantSA:         "default",
		wantAudiences:  []string{"vault"},
		wantExpiration: 3600,
		wantMode:       0o600,
	}, {
		name:           "another service account, a nested path, no defaultMode",
		serviceAccount: "builder",
		token:          corev1.ServiceAccountTokenProjection{Path: "sa/token", ExpirationSeconds: ptr(int64(600))},
		wantSA:         "builder",
		wantExpiration: 600,
		wantMode:       0o644,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			te, issuer := newTokenTestEnv(t)
			pod := testPod(kubeAPIAccess(tt.token, tt.defaultMode))
			pod.Spec.ServiceAccountName = tt.serviceAccount
			vols, warnings := setup(t, te, pod)

			dir := vols["kube-api-access-x7k2p"]
			assert.Equal(t, filepath.Join(te.podsDir, "uid-1/volumes", kubeAPIAccessDir), dir)
			assert.Equal(t, "token-1", readFile(t, filepath.Join(dir, tt.token.Path)))
			assert.Equal(t, "CA PEM", visible(t, dir, "ca.crt"))
			assert.Equal(t, "ns", visible(t, dir, "namespace"))
			assert.Equal(t, tt.wantMode, mode(t, filepath.Join(dir, tt.token.Path)))
			require.Len(t, warnings, 1, "a token is secret data: a warning when it lands on disk")
			assert.Contains(t, warnings[0], "spec.volumes[0] (kube-api-access-x7k2p): "+noTmpfs)

			calls := issuer.requests()
			require.Len(t, calls, 1)
			assert.Equal(t, "ns", calls[0].namespace)
			assert.Equal(t, tt.wantSA, calls[0].serviceAccount)
			spec := calls[0].req.Spec
			assert.Equal(t, tt.wantAudiences, spec.Audiences)
			require.NotNil(t, spec.ExpirationSeconds)
			assert.Equal(t, tt.wantExpiration, *spec.ExpirationSeconds)
			assert.Equal(t, &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "web", UID: "uid-1"}, spec.BoundObjectRef)
		})
	}
}

func TestServiceAccountTokenRefresh(t *testing.T) {
	tests := []struct {
		name       string
		expiration int64
		// fresh is the token's last age with no new request; due the first age with one.
		fresh, due time.Duration
	}{{
		name:       "at 80% of the TTL",
		expiration: 3607,
		fresh:      2885 * time.Second, // 80% of 3607 s is 2885.6 s
		due:        2886 * time.Second,
	}, {
		name:       "at 24h when 80% is later",
		expiration: 7 * 24 * 3600,
		fresh:      24 * time.Hour,
		due:        24*time.Hour + time.Second,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			te, issuer := newTokenTestEnv(t)
			pod := testPod(kubeAPIAccess(corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr(tt.expiration)}, nil))
			vols, _ := setup(t, te, pod)
			tokenFile := filepath.Join(vols["kube-api-access-x7k2p"], "token")
			ctx := context.Background()
			refresh := func() bool {
				t.Helper()
				changed, err := te.m.Refresh(ctx, pod, env.PodFacts{}, nil)
				require.NoError(t, err)
				return changed
			}

			// Every minute, as the lifecycle calls it: the cached token, nothing written.
			te.clock.Step(time.Minute)
			assert.False(t, refresh())
			te.clock.SetTime(testNow.Add(tt.fresh))
			assert.False(t, refresh())
			assert.Len(t, issuer.requests(), 1, "no request while the token is fresh")
			assert.Equal(t, "token-1", readFile(t, tokenFile))

			te.clock.SetTime(testNow.Add(tt.due))
			assert.True(t, refresh())
			assert.Len(t, issuer.requests(), 2)
			assert.Equal(t, "token-2", readFile(t, tokenFile))

			// The new token's age counts from its own issue.
			te.clock.Step(time.Minute)
			assert.False(t, refresh())
			assert.Len(t, issuer.requests(), 2)
		})
	}
}

func TestServiceAccountTokenRefreshFailure(t *testing.T) {
	te, issuer := newTokenTestEnv(t)
	pod := testPod(kubeAPIAccess(corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr(int64(3600))}, nil))
	vols, _ := setup(t, te, pod)
	tokenFile := filepath.Join(vols["kube-api-access-x7k2p"], "token")
	ctx := context.Background()
	issuer.failWith(apierrors.NewServiceUnavailable("etcd is down"))

	// Due, but the request fails: the token is still valid and stays, without an error.
	te.clock.SetTime(testNow.Add(50 * time.Minute))
	changed, err := te.m.Refresh(ctx, pod, env.PodFacts{}, nil)
	require.NoError(t, err)
	assert.False(t, changed)
	assert.Len(t, issuer.requests(), 2, "a refresh was tried")
	assert.Equal(t, "token-1", readFile(t, tokenFile))

	// Expired and still failing: an error to retry; the volume keeps its content.
	te.clock.SetTime(testNow.Add(61 * time.Minute))
	changed, err = te.m.Refresh(ctx, pod, env.PodFacts{}, nil)
	require.Error(t, err)
	assert.False(t, changed)
	assert.True(t, apierrors.IsServiceUnavailable(err), "wraps the API server's answer: %v", err)
	assert.Contains(t, err.Error(), "spec.volumes[0].projected.sources[0].serviceAccountToken: the token expired")
	assert.Equal(t, "token-1", readFile(t, tokenFile))

	// The API server is back: the next Refresh writes a new token.
	issuer.failWith(nil)
	changed, err = te.m.Refresh(ctx, pod, env.PodFacts{}, nil)
	require.NoError(t, err)
	assert.True(t, changed)
	assert.Equal(t, "token-4", readFile(t, tokenFile))
}

func TestServiceAccountTokenTeardownForgets(t *testing.T) {
	te, issuer := newTokenTestEnv(t)
	ctx := context.Background()
	source := corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr(int64(3607))}
	pod1 := testPod(kubeAPIAccess(source, nil))
	pod2 := testPod(kubeAPIAccess(source, nil))
	pod2.Name, pod2.UID = "api", types.UID("uid-2")
	setup(t, te, pod1)
	setup(t, te, pod2)
	require.Len(t, issuer.requests(), 2, "one token per pod")
	assert.Equal(t, types.UID("uid-2"), issuer.requests()[1].req.Spec.BoundObjectRef.UID)

	// Set up again (an agent's later sync): the cached tokens.
	setup(t, te, pod1)
	require.Len(t, issuer.requests(), 2)

	require.NoError(t, te.m.Teardown(ctx, pod1.UID))
	assert.Equal(t, []types.UID{"uid-2"}, cachedPods(te.m))

	// The same pod set up again after its Teardown asks for a new token.
	vols, _ := setup(t, te, pod1)
	require.Len(t, issuer.requests(), 3)
	assert.Equal(t, "token-3", readFile(t, filepath.Join(vols["kube-api-access-x7k2p"], "token")))
}

// cachedPods lists the pods that have cached tokens.
func cachedPods(m *Manager) []types.UID {
	m.tokens.mu.Lock()
	defer m.tokens.mu.Unlock()
	var out []types.UID
	for k := range m.tokens.tokens {
		out = append(out, k.podUID)
	}
	return out
}

func TestServiceAccountTokenErrors(t *testing.T) {
	tests := []struct {
		name      string
		token     corev1.ServiceAccountTokenProjection
		issuerErr error
		refusal   bool
		want      string
	}{{
		name:    "expiration below the API's minimum",
		token:   corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr(int64(599))},
		refusal: true,
		want:    `spec.volumes[0].projected.sources[0].serviceAccountToken.expirationSeconds "599": must be between 600`,
	}, {
		name:    "path outside the volume",
		token:   corev1.ServiceAccountTokenProjection{Path: "../token"},
		refusal: true,
		want:    `spec.volumes[0].projected.sources[0].serviceAccountToken.path "../token": must not contain '..'`,
	}, {
		name:      "no such service account: retried",
		token:     corev1.ServiceAccountTokenProjection{Path: "token"},
		issuerErr: apierrors.NewNotFound(schema.GroupResource{Resource: "serviceaccounts"}, "default"),
		want:      "spec.volumes[0].projected.sources[0].serviceAccountToken: requesting a token for service account ns/default: ",
	}, {
		name:      "forbidden (the pod is not bound to this node): retried",
		token:     corev1.ServiceAccountTokenProjection{Path: "token"},
		issuerErr: apierrors.NewForbidden(schema.GroupResource{Resource: "serviceaccounts/token"}, "default", errors.New("no relationship found")),
		want:      "requesting a token for service account ns/default: ",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			te, issuer := newTokenTestEnv(t)
			issuer.failWith(tt.issuerErr)
			pod := testPod(kubeAPIAccess(tt.token, nil))
			vols, _, err := te.m.Setup(context.Background(), pod, env.PodFacts{}, nil)
			t.Cleanup(func() { _ = te.m.Teardown(context.Background(), pod.UID) })
			require.Error(t, err)
			assert.Nil(t, vols)
			assert.Contains(t, err.Error(), tt.want)
			var fe *FieldError
			assert.Equal(t, tt.refusal, errors.As(err, &fe), "a *FieldError: %v", err)
			if tt.issuerErr != nil {
				assert.True(t, errors.Is(err, tt.issuerErr), "wraps the API server's answer: %v", err)
			} else {
				assert.Empty(t, issuer.requests(), "a refused source requests nothing")
			}
			assert.Empty(t, cachedPods(te.m))
		})
	}
}
