package cri

import (
	"context"
	"fmt"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/vk-static/vk-static/lifecycle"
)

var _ lifecycle.ImageUserService = (*Runtime)(nil)

// ImageUser is the user image runs as, from ImageStatus as the kubelet's getImageUser reads
// it: the uid when the image names one, else its user name; neither (root) when it names no
// user.
func (r *Runtime) ImageUser(ctx context.Context, image string) (*int64, string, error) {
	resp, err := r.is.ImageStatus(ctx, &runtimeapi.ImageSpec{Image: image}, false)
	if err != nil {
		return nil, "", fmt.Errorf("image status of %s: %w", image, err)
	}
	if st := resp.GetImage(); st != nil {
		if st.GetUid() != nil {
			uid := st.GetUid().GetValue()
			return &uid, "", nil
		}
		if st.GetUsername() != "" {
			return nil, st.GetUsername(), nil
		}
	}
	return nil, "", nil
}
