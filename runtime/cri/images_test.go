package cri

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/vk-static/vk-static/provider"
)

func TestListImagesAsCRIReportsThem(t *testing.T) {
	ctx := context.Background()
	r, _, is, _ := fakeRuntime(t, Config{})
	is.Lock()
	is.Images = map[string]*runtimeapi.Image{"sha256:b": {
		Id: "sha256:b", RepoTags: []string{"busybox:1.36"}, RepoDigests: []string{"busybox@sha256:d"}, Size: 4 << 20,
	}}
	is.Unlock()
	got, err := r.ListImages(ctx)
	require.NoError(t, err)
	assert.Equal(t, []provider.Image{{ID: "sha256:b", RepoTags: []string{"busybox:1.36"}, RepoDigests: []string{"busybox@sha256:d"}, Size: 4 << 20}}, got)

	is.InjectError("ListImages", errors.New("connection refused"))
	_, err = r.ListImages(ctx)
	assert.ErrorContains(t, err, "connection refused")
}
