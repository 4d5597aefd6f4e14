package nodeobjects

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/vk-static/vk-static/kubeclient/kubeclienttest"
)

// TestClientTokenRequester: the request goes to serviceaccounts/<name>/token in the namespace,
// its spec as given, and the API server's answer comes back.
func TestClientTokenRequester(t *testing.T) {
	client := fake.NewClientset()
	var got k8stesting.CreateActionImpl
	client.PrependReactor("create", "serviceaccounts", func(action k8stesting.Action) (bool, runtime.Object, error) {
		got = action.(k8stesting.CreateActionImpl)
		out := got.GetObject().(*authenticationv1.TokenRequest).DeepCopy()
		out.Status.Token = "issued"
		return true, out, nil
	})
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{Audiences: []string{"vault"}}}

	resp, err := NewClientTokenRequester(kubeclienttest.Wrap(client)).RequestToken(context.Background(), "shop", "web", req)
	require.NoError(t, err)
	assert.Equal(t, "issued", resp.Status.Token)
	assert.Equal(t, "token", got.GetSubresource())
	assert.Equal(t, "shop", got.GetNamespace())
	assert.Equal(t, "web", got.Name)
	assert.Equal(t, []string{"vault"}, got.GetObject().(*authenticationv1.TokenRequest).Spec.Audiences)
}
