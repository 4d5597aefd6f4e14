package kwok

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// NodeAnnotation marks a Node as KWOK's, as KWOK's documentation creates them; with
// --manage-single-node KWOK does not need it, but it tells a reader whose node it is.
const NodeAnnotation = "kwok.x-k8s.io/node"

// RegisterNode creates the Node named name with no status: KWOK's node-initialize stage makes
// it Ready. A Node left under that name is an error, not reused: KWOK would wait for the
// lease its predecessor holds (every bench run uses a fresh node name).
func RegisterNode(ctx context.Context, client kubernetes.Interface, name string) error {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
		Name:        name,
		Labels:      map[string]string{corev1.LabelHostname: name, "type": "kwok"},
		Annotations: map[string]string{NodeAnnotation: "fake"},
	}}
	if _, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("register node %s: %w (use a fresh name: KWOK waits for its predecessor's lease)", name, err)
		}
		return fmt.Errorf("register node %s: %w", name, err)
	}
	return nil
}
