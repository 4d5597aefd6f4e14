package node

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/vk-static/vk-static/kubeclient/kubeclienttest"
)

func TestEventRecorderPostsEveryEvent(t *testing.T) {
	client := fake.NewClientset()
	r := NewEventRecorder(kubeclienttest.Wrap(client), corev1.EventSource{Component: "vk-static", Host: "n1"}, EventRecorderOptions{Workers: 4})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = r.Run(ctx) })
	defer func() { cancel(); wg.Wait() }()

	for i := 0; i < 50; i++ {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("p", i), Namespace: "ns", UID: "u"}}
		r.Eventf(pod, corev1.EventTypeNormal, "Started", "Started container %s", "c")
	}
	r.Eventf(nodeRef("n1"), corev1.EventTypeWarning, "FailedManifest", "bad")
	var ev corev1.Event
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		podEvents, err := client.CoreV1().Events("ns").List(ctx, metav1.ListOptions{})
		require.NoError(c, err)
		nodeEvents, err := client.CoreV1().Events("default").List(ctx, metav1.ListOptions{})
		require.NoError(c, err)
		if len(podEvents.Items) != 50 || len(nodeEvents.Items) != 1 {
			c.Errorf("%d pod events, %d node events; want 50 and 1", len(podEvents.Items), len(nodeEvents.Items))
			return
		}
		ev = nodeEvents.Items[0]
	}, 10*time.Second, 5*time.Millisecond, "every event posted")
	if ev.InvolvedObject.Kind != "Node" || ev.Source.Host != "n1" || ev.Count != 1 || ev.Type != corev1.EventTypeWarning {
		t.Fatalf("node event %+v", ev)
	}
}

func TestEventRecorderDropsAndCountsWhenFull(t *testing.T) {
	metrics := NewMetrics(prometheus.NewRegistry(), nil)
	r := NewEventRecorder(kubeclienttest.Wrap(fake.NewClientset()), corev1.EventSource{Component: "vk-static"}, EventRecorderOptions{QueueSize: 3, Metrics: metrics})
	for i := 0; i < 5; i++ { // not running: nothing drains the queue, the caller must not block
		r.Event(nodeRef("n1"), corev1.EventTypeNormal, "R", "m")
	}
	if got := testutil.ToFloat64(metrics.eventsDropped); got != 2 {
		t.Fatalf("dropped %v, want 2", got)
	}
}

// With a backlog, an event waits for the status writes before it: posted once they drain.
func TestEventRecorderHoldsEventsBehindStatusWrites(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := fake.NewClientset()
		backlog := NewStatusBacklog(time.Minute, nil)
		r := NewEventRecorder(kubeclienttest.Wrap(client), corev1.EventSource{Component: "vk-static", Host: "n1"},
			EventRecorderOptions{Workers: 2, Backlog: backlog})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go func() { _ = r.Run(ctx) }()
		posted := func() int {
			l, err := client.CoreV1().Events("ns").List(ctx, metav1.ListOptions{})
			require.NoError(t, err)
			return len(l.Items)
		}

		backlog.begin() // a status write in flight
		r.Event(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "u"}}, corev1.EventTypeNormal, "Started", "Started container c")
		synctest.Wait()
		assert.Zero(t, posted(), "held back behind the status write")
		backlog.end()
		synctest.Wait()
		assert.Equal(t, 1, posted(), "posted once the write is done")
	})
}
