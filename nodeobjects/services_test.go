package nodeobjects

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/vk-static/vk-static/kubeclient/kubeclienttest"
)

// TestServiceWatch: nothing is read before Run; Run lists every namespace's Services, follows
// new ones, and returns when its context ends.
func TestServiceWatch(t *testing.T) {
	client := fake.NewClientset(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}})
	w := NewServiceWatch(kubeclienttest.Wrap(client))
	assert.False(t, w.HasSynced(), "NewServiceWatch starts nothing")

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- w.Run(ctx) }()
	defer func() { cancel(); assert.NoError(t, <-done) }()
	require.Eventually(t, w.HasSynced, 10*time.Second, time.Millisecond)

	names := func() []string {
		list, err := w.List()
		require.NoError(t, err)
		var out []string
		for _, s := range list {
			out = append(out, s.Namespace+"/"+s.Name)
		}
		return out
	}
	assert.Equal(t, []string{"shop/web"}, names())

	_, err := client.CoreV1().Services("default").Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "kubernetes"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(names()) == 2 }, 10*time.Second, time.Millisecond, "a new Service is watched")
}
