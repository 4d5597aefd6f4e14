package kubeclient

import (
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// IsReplaced reports whether err is the API server's refusal of a write made for a pod's UID
// when the pod of that name is now another: a DELETE's UID precondition fails with 409
// Conflict, but a patch's metadata.uid precondition with 422 Invalid on field metadata.uid
// ("field is immutable"). The kubelet's status manager reads the pod before each patch and
// never sends one for a replaced pod; the agent patches without that read, so it must tell
// this Invalid (drop the write: the successor has its own) from a status the API server
// refuses (write it differently or not at all).
func IsReplaced(err error) bool {
	if apierrors.IsConflict(err) {
		return true
	}
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) || status.Status().Details == nil {
		return false
	}
	for _, cause := range status.Status().Details.Causes {
		if cause.Field == "metadata.uid" {
			return true
		}
	}
	return false
}
