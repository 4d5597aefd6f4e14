package integration

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/vk-static/vk-static/kubeclient/kubeclienttest"
	"github.com/vk-static/vk-static/mirror"
	"github.com/vk-static/vk-static/node"
	"github.com/vk-static/vk-static/podmanager"
	"github.com/vk-static/vk-static/provider/mock"
	"github.com/vk-static/vk-static/sources"
)

// requestCounter counts the agent's API requests by "VERB path-suffix".
type requestCounter struct {
	mu     sync.Mutex
	counts map[string]int
	writes []string // every key but GETs, LISTs and WATCHes, in order
	next   http.RoundTripper
}

func (c *requestCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	key := r.Method
	switch {
	case strings.HasSuffix(r.URL.Path, "/status"):
		key += " status"
	case strings.Contains(r.URL.Path, "/events"):
		key += " events"
	}
	c.mu.Lock()
	c.counts[key]++
	if r.Method != http.MethodGet {
		c.writes = append(c.writes, key)
	}
	c.mu.Unlock()
	return c.next.RoundTrip(r)
}

// writesSince are the writes after the first n.
func (c *requestCounter) writesSince(n int) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.writes[n:]...)
}

func (c *requestCounter) get(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.counts[key]
}

// TestAPIWritesPerPodStart: starting an API pod costs one status patch and one Started event;
// the status echoed back by the watch is not written again. Deleting it costs the kubelet's
// two writes, in its order: the terminal status, then the DELETE.
func TestAPIWritesPerPodStart(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	const nodeName = "node-writes"
	cfg, err := env.NodeConfig(nodeName)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ContentType = "application/vnd.kubernetes.protobuf" // as the agent's client
	counter := &requestCounter{counts: map[string]int{}}
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { counter.next = rt; return counter }
	client := kubernetes.NewForConfigOrDie(cfg)
	if _, err := client.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Admin.CoreV1().Nodes().Delete(ctx, nodeName, metav1.DeleteOptions{}) })

	baseline := goleak.IgnoreCurrent()
	runCtx, cancel := context.WithCancel(ctx)
	provider, err := mock.New(mock.Config{NodeName: nodeName, InternalIP: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	// The agent's own recorder, which posts through the REST client without decoding answers.
	recorder := node.NewEventRecorder(kubeclienttest.Wrap(client), corev1.EventSource{Component: "vk-static", Host: nodeName}, node.EventRecorderOptions{})
	nodes := mirror.NodeGetterFunc(func(name string) (*corev1.Node, error) {
		return client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	})
	mux := sources.NewMux(nil, sources.NewAPISource(kubeclienttest.Wrap(client), nodeName))
	ctrl, err := node.NewPodController(node.PodControllerConfig{
		NodeName: nodeName, Provider: provider,
		Pods:    podmanager.NewBasicPodManager(),
		Updates: mux.Updates(), Client: kubeclienttest.Wrap(client), Node: nodes,
		Mirrors:  mirror.NewBasicMirrorClient(kubeclienttest.Wrap(client), nodeName, nodes),
		Recorder: recorder,
	})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() { _ = recorder.Run(runCtx) })
	wg.Go(func() { mux.Run(runCtx) })
	wg.Go(func() { _ = ctrl.Run(runCtx) })
	defer func() {
		cancel()
		wg.Wait()
		goleak.VerifyNone(t, baseline)
	}()
	<-ctrl.Ready()

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec:       corev1.PodSpec{NodeName: nodeName, Containers: []corev1.Container{{Name: "main", Image: "nginx:1"}}},
	}
	if _, err := env.Admin.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Gone before the next run of this test (-count), whose agent would otherwise start it again.
	t.Cleanup(func() { _ = env.Admin.CoreV1().Pods(ns).Delete(ctx, "web", *metav1.NewDeleteOptions(0)) })
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		p, err := env.Admin.CoreV1().Pods(ns).Get(ctx, "web", metav1.GetOptions{})
		require.NoError(c, err)
		require.Equal(c, corev1.PodRunning, p.Status.Phase)
		evs, err := env.Admin.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "reason=Started"})
		require.NoError(c, err)
		assert.Len(c, evs.Items, 1, "Started events")
	}, 10*time.Second, 5*time.Millisecond, "Running with a Started event")
	// The watch echoes the written status back; nothing may be written in response.
	quiet := time.Now().Add(time.Second)
	for time.Now().Before(quiet) {
		if n := counter.get("PATCH status"); n != 1 {
			t.Fatalf("%d status patches for one pod start, want 1", n)
		}
		time.Sleep(50 * time.Millisecond) // sampling a window in which nothing may happen
	}
	if n := counter.get("POST events"); n != 1 {
		t.Errorf("%d events created, want 1 (Started)", n)
	}

	before := len(counter.writesSince(0))
	if err := env.Admin.CoreV1().Pods(ns).Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	require.Eventually(t, func() bool {
		_, err := env.Admin.CoreV1().Pods(ns).Get(ctx, "web", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}, 10*time.Second, 5*time.Millisecond, "pod deleted")
	// No node controller runs here: these are the pod's writes alone.
	assert.Equal(t, []string{"PATCH status", "DELETE"}, counter.writesSince(before), "writes while the pod was deleted")
}
