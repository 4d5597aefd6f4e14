package cri

import (
	"context"

	"github.com/vk-static/vk-static/node/health"
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
