package node

import (
	"bytes"
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// patchPodStatus sends a strategic-merge patch to the pod's status subresource. The API
// server answers with the whole pod, which nobody here reads (the watch brings the pod back):
// through a real REST client the answer is not decoded — at 1000 pods starting, decoding it
// was a fifth of the agent's allocations (docs/performance.md, "Closing the gaps to the
// floor"). A client without one (client-go's fake) takes the typed path.
func patchPodStatus(ctx context.Context, client kubernetes.Interface, namespace, name string, patch []byte) error {
	if rc, ok := client.CoreV1().RESTClient().(*rest.RESTClient); ok && rc != nil {
		return rc.Patch(types.StrategicMergePatchType).Namespace(namespace).Resource("pods").Name(name).
			SubResource("status").Body(patch).Do(ctx).Error()
	}
	_, err := client.CoreV1().Pods(namespace).Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	return err
}

// sameStatus reports whether a and b are the same status, by their protobuf encodings: the
// generated marshalers are deterministic (map keys sorted), never reflect, and allocate two
// buffers, where equality.Semantic.DeepEqual walked both by reflection — a tenth of the
// agent's CPU at 1000 pods starting. nil and empty lists encode alike, as Semantic has them
// equal; timestamps are compared at the precision they are written with. A difference the
// encodings show and Semantic would not (a quantity written in another form) costs at most
// one write more, never one less.
func sameStatus(a, b *corev1.PodStatus) bool {
	ab, errA := a.Marshal()
	bb, errB := b.Marshal()
	if errA != nil || errB != nil {
		return equality.Semantic.DeepEqual(a, b)
	}
	return bytes.Equal(ab, bb)
}
