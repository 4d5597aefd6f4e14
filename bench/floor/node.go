package floor

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// registerNode creates the Node named name with a Ready condition, in one request: the bench
// waits for it before it binds pods, and nothing else of a Node matters to the floor (no
// controller-manager watches its heartbeat on the bench's control plane). A Node left by an
// earlier run under the same name is reused as it is. It returns the Node, whose UID mirror
// pods name as their owner.
func registerNode(ctx context.Context, client kubernetes.Interface, name string, now metav1.Time) (*corev1.Node, error) {
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name}},
		Status: corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{{
				Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "FloorReady",
				LastHeartbeatTime: now, LastTransitionTime: now,
			}},
		},
	}
	created, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		created, err = client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	}
	if err != nil {
		return nil, fmt.Errorf("register node %s: %w", name, err)
	}
	return created, nil
}
