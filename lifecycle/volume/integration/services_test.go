package integration

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vk-static/vk-static/kubeclient/kubeclienttest"
	podenv "github.com/vk-static/vk-static/lifecycle/env"
	"github.com/vk-static/vk-static/nodeobjects"
)

// TestServiceWatchAsANode: a node may list and watch every namespace's Services (the Node
// authorizer lets it, for the kubelet's service environment variables); the watch gives the
// pod's namespace's services and the master service, and follows new ones.
func TestServiceWatchAsANode(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := env.Namespace(t)
	create := func(name string) *corev1.Service {
		t.Helper()
		s, err := env.Admin.CoreV1().Services(ns).Create(ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 8080}}},
		}, metav1.CreateOptions{})
		require.NoError(t, err)
		require.NotEmpty(t, s.Spec.ClusterIP, "the API server allocates a cluster IP")
		return s
	}
	web := create("web")

	w := nodeobjects.NewServiceWatch(kubeclienttest.Wrap(env.NodeClient(t, "node-a")))
	done := make(chan struct{})
	go func() { defer close(done); assert.NoError(t, w.Run(ctx)) }()
	defer func() { cancel(); <-done }()
	require.Eventually(t, w.HasSynced, 30*time.Second, 10*time.Millisecond, "a node may list the services")

	vars := func() map[string]string {
		list, err := w.List()
		require.NoError(t, err)
		return podenv.ServiceEnv(list, ns, true)
	}
	got := vars()
	assert.Equal(t, web.Spec.ClusterIP, got["WEB_SERVICE_HOST"])
	assert.Equal(t, "8080", got["WEB_SERVICE_PORT_HTTP"])
	// The API server makes its own service a moment after it answers: wait for it, then for
	// the watch to show it.
	var kubernetes *corev1.Service
	require.Eventually(t, func() bool {
		var err error
		kubernetes, err = env.Admin.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
		return err == nil
	}, 30*time.Second, 10*time.Millisecond, "the API server's own service")
	require.Eventually(t, func() bool { return vars()["KUBERNETES_SERVICE_HOST"] == kubernetes.Spec.ClusterIP }, 30*time.Second, 10*time.Millisecond,
		"the master service, from the default namespace")

	db := create("db")
	require.Eventually(t, func() bool { return vars()["DB_SERVICE_HOST"] == db.Spec.ClusterIP }, 30*time.Second, 10*time.Millisecond,
		"a new service is watched")
}
