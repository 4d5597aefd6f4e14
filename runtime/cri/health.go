package cri

import (
	"context"
	"fmt"

	"github.com/vk-static/vk-static/lifecycle"
	"github.com/vk-static/vk-static/lifecycle/health"
)

var _ health.Checker = (*Runtime)(nil)

// Status is the runtime's own RuntimeReady and NetworkReady conditions (CRI Status), which the
// Node's Ready condition follows as the kubelet's does; an error when the runtime does not
// answer (stopped, crashed: the Node turns NotReady once that has lasted the threshold).
func (r *Runtime) Status(ctx context.Context) (*health.Status, error) {
	resp, err := r.rs.Status(ctx, false)
	if err != nil {
		return nil, err
	}
	st := &health.Status{}
	for _, c := range resp.GetStatus().GetConditions() {
		st.Conditions = append(st.Conditions, health.Condition{
			Type: c.GetType(), Status: c.GetStatus(), Reason: c.GetReason(), Message: c.GetMessage(),
		})
	}
	return st, nil
}

var _ lifecycle.ImageFsDir = (*Runtime)(nil)

// ImageFsDir is the mountpoint of the runtime's image filesystem (CRI ImageFsInfo), whose
// statfs gives the imagefs eviction signals as the kubelet's stats of it do.
func (r *Runtime) ImageFsDir(ctx context.Context) (string, error) {
	fs, err := r.is.ImageFsInfo(ctx)
	if err != nil {
		return "", fmt.Errorf("image filesystem info: %w", err)
	}
	if len(fs.GetImageFilesystems()) == 0 {
		return "", fmt.Errorf("image filesystem info: the runtime reports no image filesystem")
	}
	return fs.GetImageFilesystems()[0].GetFsId().GetMountpoint(), nil
}
