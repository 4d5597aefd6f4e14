package cri

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The image's user as ImageStatus gives it: a uid, else a user name, else none (root).
func TestImageUser(t *testing.T) {
	r, _, is, _ := fakeRuntime(t, Config{})
	is.SetFakeImages([]string{"nonroot", "named", "plain"})
	is.Lock()
	is.Images["nonroot"].Uid = &runtimeapi.Int64Value{Value: 1234}
	is.Images["named"].Username = "nginx"
	is.Unlock()
	ctx := context.Background()

	uid, name, err := r.ImageUser(ctx, "nonroot")
	require.NoError(t, err)
	require.NotNil(t, uid)
	assert.Equal(t, int64(1234), *uid)
	assert.Empty(t, name)

	uid, name, err = r.ImageUser(ctx, "named")
	require.NoError(t, err)
	assert.Nil(t, uid)
	assert.Equal(t, "nginx", name)

	uid, name, err = r.ImageUser(ctx, "plain")
	require.NoError(t, err)
	assert.Nil(t, uid)
	assert.Empty(t, name)
}
