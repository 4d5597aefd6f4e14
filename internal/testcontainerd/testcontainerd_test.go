package testcontainerd_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	criclient "k8s.io/cri-client/pkg"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/vk-static/vk-static/internal/testcontainerd"
)

var cd *testcontainerd.Containerd

func TestMain(m *testing.M) { os.Exit(testcontainerd.Main(m, &cd)) }

func TestReady(t *testing.T) {
	ctx := context.Background()
	rs, err := criclient.NewRemoteRuntimeService(ctx, cd.Endpoint(), 10*time.Second, nil, false)
	require.NoError(t, err)
	defer rs.Close(ctx)
	v, err := rs.Version(ctx, "v1")
	require.NoError(t, err)
	require.Equal(t, "containerd", v.RuntimeName)
	is, err := criclient.NewRemoteImageService(ctx, cd.Endpoint(), 10*time.Second, nil, false)
	require.NoError(t, err)
	img, err := is.ImageStatus(ctx, &runtimeapi.ImageSpec{Image: testcontainerd.SandboxImage}, false)
	require.NoError(t, err)
	require.NotNil(t, img.GetImage(), "sandbox image imported")
}
