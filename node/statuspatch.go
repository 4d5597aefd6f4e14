package node

import (
	"bytes"
	"context"
	"encoding/json"
	"io"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// patchPodStatus sends a strategic-merge patch to the pod's status subresource. The API
// server answers with the whole pod, which nobody here reads (the watch brings the pod back):
// through a real REST client the answer is neither decoded — at 1000 pods starting, decoding
// it was a fifth of the agent's allocations (docs/performance.md, "Closing the gaps to the
// floor") — nor read into memory. A client without one (client-go's fake) takes the typed
// path.
func patchPodStatus(ctx context.Context, client kubernetes.Interface, namespace, name string, patch []byte) error {
	if rc, ok := client.CoreV1().RESTClient().(*rest.RESTClient); ok && rc != nil {
		return sendDroppingAnswer(ctx, rc.Patch(types.StrategicMergePatchType).Namespace(namespace).
			Resource("pods").Name(name).SubResource("status").Body(patch))
	}
	_, err := client.CoreV1().Pods(namespace).Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	return err
}

// sendDroppingAnswer sends req and drops the API server's answer unread: Stream, not Do, as
// Do reads the whole answer into memory first. An error answer is still an API error
// (apierrors.IsNotFound and the like see it).
func sendDroppingAnswer(ctx context.Context, req *rest.Request) error {
	body, err := req.Stream(ctx)
	if err != nil {
		return err
	}
	defer body.Close()
	_, err = io.Copy(io.Discard, body) // to its end, so that the connection's stream is done
	return err
}

// statusPatch is the body of the strategic-merge patch that writes status to pod uid. The API
// merges podIPs and hostIPs by ip: sent as they are, a new address would be added beside the
// one the API server holds, and two addresses of one family are refused ("may specify no more
// than one IP for each IP family") — every later write with them. So each list is sent with
// the "$patch": "replace" directive, which replaces it whole, as the kubelet's two-way patch
// from the status it wrote does. An empty list is left out: what the API server holds stays
// (a pod's addresses never go away while it lives). The conditions merge by type, keeping
// those others set (readiness gates, DisruptionTarget).
//
// The body is a struct, not a map: encoding/json sorts a map's keys and encodes each value
// through an interface on every write (docs/performance.md, "CPU per write"); the struct's
// fields are in the map's key order, so the bytes are the same.
func statusPatch(uid types.UID, status *corev1.PodStatus) ([]byte, error) {
	return json.Marshal(statusPatchBody{
		Metadata: patchPrecondition{UID: uid},
		Status: statusBody{PodStatus: status,
			PodIPs: replaceList(status.PodIPs), HostIPs: replaceList(status.HostIPs)},
	})
}

// statusPatchBody is statusPatch's body.
type statusPatchBody struct {
	Metadata patchPrecondition `json:"metadata"`
	Status   statusBody        `json:"status"`
}

// patchPrecondition is the patch's metadata: the UID makes the API server refuse it for a
// newer pod of the same name.
type patchPrecondition struct {
	UID types.UID `json:"uid"`
}

// statusBody is a status whose podIPs and hostIPs replace the API server's (their fields at
// the outer level hide the embedded ones from encoding/json).
type statusBody struct {
	*corev1.PodStatus
	PodIPs  []any `json:"podIPs,omitempty"`
	HostIPs []any `json:"hostIPs,omitempty"`
}

// replaceDirective is the strategic-merge list element that makes the list replace the
// server's.
var replaceDirective = map[string]string{"$patch": "replace"}

// replaceList is list with replaceDirective after its elements; nil for an empty list.
func replaceList[T any](list []T) []any {
	if len(list) == 0 {
		return nil
	}
	out := make([]any, 0, len(list)+1)
	for _, e := range list {
		out = append(out, e)
	}
	return append(out, replaceDirective)
}

// sameStatus reports whether a and b are the same status, by their protobuf encodings: the
// generated marshalers are deterministic (map keys sorted), never reflect, and allocate two
// buffers, where equality.Semantic.DeepEqual walked both by reflection — a tenth of the
// agent's CPU at 1000 pods starting. nil and empty lists encode alike, as Semantic has them
// equal; timestamps are compared at the precision they are written with. A difference the
// encodings show and Semantic would not (a quantity written in another form) costs at most
// one write more, never one less.
func sameStatus(a, b *corev1.PodStatus) bool {
	return encodeStatus(b).same(a)
}

// encodedStatus is a status with its protobuf encoding, made once to compare it with several
// others (the status writer compares the status it built with the API object's and with the
// one it last wrote).
type encodedStatus struct {
	status  *corev1.PodStatus
	encoded []byte
	err     error
}

func encodeStatus(s *corev1.PodStatus) encodedStatus {
	b, err := s.Marshal()
	return encodedStatus{status: s, encoded: b, err: err}
}

// same is sameStatus(other, e.status).
func (e encodedStatus) same(other *corev1.PodStatus) bool {
	ob, err := other.Marshal()
	if e.err != nil || err != nil {
		return equality.Semantic.DeepEqual(other, e.status)
	}
	return bytes.Equal(ob, e.encoded)
}
