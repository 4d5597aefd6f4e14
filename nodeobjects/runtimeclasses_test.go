package nodeobjects

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/vk-static/vk-static/kubeclient/kubeclienttest"
)

// The getter reads the RuntimeClass as it is; a missing one is the API server's NotFound.
func TestClientRuntimeClassGetter(t *testing.T) {
	ctx := context.Background()
	client := fake.NewClientset(&nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "kata-rc"}, Handler: "kata"})
	g := NewClientRuntimeClassGetter(kubeclienttest.Wrap(client))

	rc, err := g.GetRuntimeClass(ctx, "kata-rc")
	require.NoError(t, err)
	assert.Equal(t, "kata", rc.Handler)

	_, err = g.GetRuntimeClass(ctx, "foo")
	assert.True(t, apierrors.IsNotFound(err), "missing RuntimeClass: %v", err)
	assert.EqualError(t, err, `runtimeclasses.node.k8s.io "foo" not found`)
}
