package kubeclienttest_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/util/watchlist"

	"github.com/vk-static/vk-static/kubeclient/kubeclienttest"
)

func TestWrapUsesTheFakesTracker(t *testing.T) {
	cs := fake.NewClientset(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}})
	c := kubeclienttest.Wrap(cs)
	pod, err := c.Pods("ns").Get(context.Background(), "p", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "p", pod.Name)
	_, err = c.Nodes().Create(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = cs.CoreV1().Nodes().Get(context.Background(), "n", metav1.GetOptions{})
	assert.NoError(t, err)
	assert.True(t, watchlist.DoesClientNotSupportWatchListSemantics(c), "the fake cannot stream lists as watches")
}
