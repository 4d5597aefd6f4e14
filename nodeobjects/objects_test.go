package nodeobjects

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/vk-static/vk-static/kubeclient/kubeclienttest"
)

func TestClientGetter(t *testing.T) {
	ctx := context.Background()
	client := fake.NewClientset(
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "cfg"}, Data: map[string]string{"k": "v"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "db"}, Data: map[string][]byte{"password": []byte("s3cret")}},
	)
	g := NewClientGetter(kubeclienttest.Wrap(client))

	cm, err := g.GetConfigMap(ctx, "shop", "cfg")
	require.NoError(t, err)
	assert.Equal(t, "v", cm.Data["k"])
	s, err := g.GetSecret(ctx, "shop", "db")
	require.NoError(t, err)
	assert.Equal(t, []byte("s3cret"), s.Data["password"])

	_, err = g.GetConfigMap(ctx, "other", "cfg")
	assert.True(t, apierrors.IsNotFound(err), "config map in another namespace: %v", err)
	_, err = g.GetSecret(ctx, "shop", "nope")
	assert.True(t, apierrors.IsNotFound(err), "missing secret: %v", err)
}
