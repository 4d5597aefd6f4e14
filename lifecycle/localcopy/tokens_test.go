package localcopy

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// A pod's token is kept and served while the API server cannot be reached, until it expires.
func TestTokensKeptUntilTheyExpire(t *testing.T) {
	ctx := context.Background()
	expires := time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)
	api := &fakeAPI{token: &authenticationv1.TokenRequest{Status: authenticationv1.TokenRequestStatus{
		Token: "issued", ExpirationTimestamp: metav1.NewTime(expires)}}}
	s, pod, clk := newStore(t, api)
	tokens := s.Tokens()
	req := func(audience string) *authenticationv1.TokenRequest {
		return &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
			Audiences: []string{audience}, ExpirationSeconds: ptr.To[int64](3600),
			BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID}}}
	}
	tr, err := tokens.RequestToken(ctx, "shop", "default", req("api"))
	require.NoError(t, err)
	assert.Equal(t, "issued", tr.Status.Token)
	files, err := filepath.Glob(filepath.Join(s.Dir(pod.UID), "token-*.json"))
	require.NoError(t, err)
	require.Len(t, files, 1)
	fi, err := os.Stat(files[0])
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode())

	api.err = refused
	tr, err = tokens.RequestToken(ctx, "shop", "default", req("api"))
	require.NoError(t, err)
	assert.Equal(t, "issued", tr.Status.Token, "the kept token while the API server cannot be reached")
	assert.True(t, tr.Status.ExpirationTimestamp.Time.Equal(expires), "with its expiry")
	_, err = tokens.RequestToken(ctx, "shop", "default", req("vault"))
	assert.ErrorIs(t, err, syscall.ECONNREFUSED, "another audience's token is another token")
	_, err = tokens.RequestToken(ctx, "shop", "other", req("api"))
	assert.ErrorIs(t, err, syscall.ECONNREFUSED, "another service account's token is another token")

	clk.SetTime(expires)
	_, err = tokens.RequestToken(ctx, "shop", "default", req("api"))
	assert.ErrorIs(t, err, syscall.ECONNREFUSED, "an expired token is never served")
	assert.NoFileExists(t, files[0], "nor kept")

	// A request bound to no pod is passed on, and nothing is kept.
	clk.SetTime(expires.Add(-time.Hour))
	api.err = nil
	unbound := req("api")
	unbound.Spec.BoundObjectRef = nil
	_, err = tokens.RequestToken(ctx, "shop", "default", unbound)
	require.NoError(t, err)
	files, err = filepath.Glob(filepath.Join(s.Dir(pod.UID), "token-*.json"))
	require.NoError(t, err)
	assert.Empty(t, files)

	// The service account is gone (404): its token goes too.
	_, err = tokens.RequestToken(ctx, "shop", "default", req("api"))
	require.NoError(t, err)
	api.token = nil
	_, err = tokens.RequestToken(ctx, "shop", "default", req("api"))
	assert.True(t, apierrors.IsNotFound(err))
	api.err = refused
	_, err = tokens.RequestToken(ctx, "shop", "default", req("api"))
	assert.ErrorIs(t, err, syscall.ECONNREFUSED)
}
