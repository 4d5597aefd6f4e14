package testimage_test

import (
	"archive/tar"
	"context"
	"errors"
	"io"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	criclient "k8s.io/cri-client/pkg"

	"github.com/vk-static/vk-static/test/support/testcontainerd"
	"github.com/vk-static/vk-static/test/support/testimage"
)

var cd *testcontainerd.Containerd

func TestMain(m *testing.M) { os.Exit(testcontainerd.Main(m, &cd)) }

func TestBuild(t *testing.T) {
	img, err := testimage.Build(testimage.Options{
		Cmd:    []string{"serve", "--port", "8080"},
		Env:    []string{"GREETING=hi"},
		Labels: map[string]string{"test": "yes"},
		Files:  map[string]string{"/srv/data/index.html": "<p>hi</p>"},
	})
	require.NoError(t, err)
	cfg, err := img.ConfigFile()
	require.NoError(t, err)
	assert.Equal(t, "linux", cfg.OS)
	assert.Equal(t, runtime.GOARCH, cfg.Architecture)
	assert.Equal(t, []string{testimage.Entrypoint}, cfg.Config.Entrypoint)
	assert.Equal(t, []string{"serve", "--port", "8080"}, cfg.Config.Cmd)
	assert.Contains(t, cfg.Config.Env, "GREETING=hi")
	assert.Equal(t, map[string]string{"test": "yes"}, cfg.Config.Labels)

	contents := map[string]string{}
	modes := map[string]int64{}
	tr := tar.NewReader(mutate.Extract(img))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		modes[h.Name] = h.Mode
		if h.Typeflag == tar.TypeReg && h.Size < 1<<20 {
			data, err := io.ReadAll(tr)
			require.NoError(t, err)
			contents[h.Name] = string(data)
		}
	}
	assert.Equal(t, testimage.DefaultMarker, contents["etc/vk-image"])
	assert.Equal(t, "<p>hi</p>", contents["srv/data/index.html"])
	assert.Equal(t, int64(0o755), modes["workload"])
	assert.Equal(t, int64(0o1777), modes["tmp"])
	assert.Contains(t, modes, "srv/data")

	layers, err := img.Layers()
	require.NoError(t, err)
	require.Len(t, layers, 2, "the program's layer and the marker's")
	pause, err := testimage.Build(testimage.Options{})
	require.NoError(t, err)
	pauseLayers, err := pause.Layers()
	require.NoError(t, err)
	programDigest, err := layers[0].Digest()
	require.NoError(t, err)
	pauseProgramDigest, err := pauseLayers[0].Digest()
	require.NoError(t, err)
	assert.Equal(t, programDigest, pauseProgramDigest, "images share the program's layer")

	again, err := testimage.Build(testimage.Options{})
	require.NoError(t, err)
	d1, err := pause.Digest()
	require.NoError(t, err)
	d2, err := again.Digest()
	require.NoError(t, err)
	assert.Equal(t, d1, d2, "the same options build the same image")
	marked, err := testimage.Build(testimage.Options{Marker: "other\n"})
	require.NoError(t, err)
	d3, err := marked.Digest()
	require.NoError(t, err)
	assert.NotEqual(t, d1, d3, "a marker makes a distinct image")

	_, err = testimage.Build(testimage.Options{Files: map[string]string{"relative": ""}})
	assert.Error(t, err)
}

// TestImportAndPull gets an image into containerd both ways: imported from a tarball, and
// pulled through CRI from the in-process registry on 127.0.0.1 over plain HTTP. CRI's image ID
// is the image's config digest either way.
func TestImportAndPull(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	is, err := criclient.NewRemoteImageService(ctx, cd.Endpoint(), 10*time.Second, nil, false)
	require.NoError(t, err)

	imported, err := testimage.Build(testimage.Options{Marker: "imported\n"})
	require.NoError(t, err)
	require.NoError(t, testimage.Import(ctx, cd, "localhost/test/imported:1", imported))
	status, err := is.ImageStatus(ctx, &runtimeapi.ImageSpec{Image: "localhost/test/imported:1"}, false)
	require.NoError(t, err)
	require.NotNil(t, status.GetImage())
	configDigest, err := imported.ConfigName()
	require.NoError(t, err)
	assert.Equal(t, configDigest.String(), status.GetImage().GetId())

	reg, err := testimage.StartRegistry(ctx)
	require.NoError(t, err)
	defer reg.Close()
	pulled, err := testimage.Build(testimage.Options{Marker: "pulled\n"})
	require.NoError(t, err)
	ref, err := reg.Push(ctx, "test/pulled:1", pulled)
	require.NoError(t, err)
	assert.Equal(t, reg.Host()+"/test/pulled:1", ref)
	imageRef, err := is.PullImage(ctx, &runtimeapi.ImageSpec{Image: ref}, nil, nil)
	require.NoError(t, err)
	status, err = is.ImageStatus(ctx, &runtimeapi.ImageSpec{Image: ref}, false)
	require.NoError(t, err)
	require.NotNil(t, status.GetImage())
	configDigest, err = pulled.ConfigName()
	require.NoError(t, err)
	assert.Equal(t, configDigest.String(), status.GetImage().GetId())
	assert.Equal(t, imageRef, status.GetImage().GetId())

	_, err = is.PullImage(ctx, &runtimeapi.ImageSpec{Image: reg.Host() + "/test/missing:1"}, nil, nil)
	assert.Error(t, err, "a missing image is not pulled")
}
