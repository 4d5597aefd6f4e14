package podwait

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// poll is how often the API server is asked.
const poll = 100 * time.Millisecond

// Until polls pod namespace/name until check passes (returns nil) and returns the pod that
// passed; what names the state awaited in the failure message.
func Until(t testing.TB, client kubernetes.Interface, namespace, name string, timeout time.Duration, what string, check func(*corev1.Pod) error) *corev1.Pod {
	t.Helper()
	var got *corev1.Pod
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		p, err := client.CoreV1().Pods(namespace).Get(context.Background(), name, metav1.GetOptions{})
		require.NoError(c, err)
		if err := check(p); err != nil {
			c.Errorf("%v", err)
			return
		}
		got = p
	}, timeout, poll, "%s/%s: %s", namespace, name, what)
	return got
}

// Gone polls until pod namespace/name is gone from the API.
func Gone(t testing.TB, client kubernetes.Interface, namespace, name string, timeout time.Duration) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		p, err := client.CoreV1().Pods(namespace).Get(context.Background(), name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return
		}
		require.NoError(c, err)
		c.Errorf("still there (deletionTimestamp %v, finalizers %v)", p.DeletionTimestamp, p.Finalizers)
	}, timeout, poll, "%s/%s gone", namespace, name)
}
