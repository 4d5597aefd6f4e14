package localcopy

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A pod's RuntimeClass is kept as its config maps are: a sandbox made again during an outage
// gets the handler it had; a RuntimeClass gone (404) is gone from the copy too.
func TestRuntimeClassKept(t *testing.T) {
	ctx := context.Background()
	api := &fakeAPI{runtimes: map[string]*nodev1.RuntimeClass{"gvisor": {ObjectMeta: metav1.ObjectMeta{Name: "gvisor"}, Handler: "runsc"}}}
	s, pod, _ := newStore(t, api)
	rcs := s.RuntimeClasses(pod)

	rc, err := rcs.GetRuntimeClass(ctx, "gvisor")
	require.NoError(t, err)
	assert.Equal(t, "runsc", rc.Handler)

	api.err = refused
	rc, err = rcs.GetRuntimeClass(ctx, "gvisor")
	require.NoError(t, err, "the copy answers while the API server cannot be reached")
	assert.Equal(t, "runsc", rc.Handler)

	api.err = nil
	delete(api.runtimes, "gvisor")
	_, err = rcs.GetRuntimeClass(ctx, "gvisor")
	assert.True(t, apierrors.IsNotFound(err))
	api.err = refused
	_, err = rcs.GetRuntimeClass(ctx, "gvisor")
	assert.ErrorIs(t, err, refused, "the 404 removed the copy")

	assert.Nil(t, New(Config{PodsDir: t.TempDir()}).RuntimeClasses(pod), "standalone: none")
}
