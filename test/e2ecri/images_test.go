package e2ecri

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/vk-static/vk-static/test/support/podwait"
)

// TestMissingImageBacksOff: an API pod whose image the registry does not have waits with
// ErrImagePull, then ImagePullBackOff, and the agent pulls again after a growing back-off
// (10 s, then 20 s, as the kubelet); a new pod with the image fixed runs.
func TestMissingImageBacksOff(t *testing.T) {
	a := startAgent(t)
	ns := env.Namespace(t)
	ctx := context.Background()
	pulls := watchPulls(t, ns, "missing")
	reasons := watchWaitingReasons(t, ns, "missing")

	missing := registryHost + "/test/missing:1"
	pod := imagePod("missing", missing, "sleep")
	pod.Spec.NodeName = a.Node
	_, err := env.Admin.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	require.NoError(t, err)

	// Three pulls: the second after the first back-off (10 s), the third after twice that.
	var at []time.Time
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		at = pulls()
		assert.GreaterOrEqual(c, len(at), 3, "pulls at %v", at)
	}, 60*time.Second, 200*time.Millisecond, "three pulls of the missing image")
	first, second := at[1].Sub(at[0]), at[2].Sub(at[1])
	t.Logf("pulls %s and then %s apart", first.Round(100*time.Millisecond), second.Round(100*time.Millisecond))
	assert.InDelta(t, 10, first.Seconds(), 4, "first back-off")
	assert.Greater(t, second.Seconds(), first.Seconds()*1.5, "the back-off did not grow")

	p, err := env.Admin.CoreV1().Pods(ns).Get(ctx, "missing", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, corev1.PodPending, p.Status.Phase)
	if cs := podwait.MainStatus(p); assert.NotNil(t, cs) && assert.NotNil(t, cs.State.Waiting, "main %s", podwait.Describe(cs)) {
		assert.Contains(t, cs.State.Waiting.Message, missing)
	}
	// The status said why the container waits: the pull failed, then (between pulls) that the
	// agent backs off. The kubelet shows ImagePullBackOff because its pod worker syncs a pod
	// whose sync failed again after ~10 s (backOffPeriod, jittered), within the image's
	// back-off from the second failure on.
	seen := reasons()
	assert.Contains(t, seen, "ErrImagePull", "waiting reasons of main in the pod's statuses")
	assert.Contains(t, seen, "ImagePullBackOff", "waiting reasons of main in the pod's statuses")
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		failed := eventMessages(c, ns, "missing", "Failed")
		assert.Contains(c, failed, "Error: ErrImagePull")
	}, 10*time.Second, 200*time.Millisecond, "Failed events")

	fixed := imagePod("fixed", workloadImage, "sleep")
	fixed.Spec.NodeName = a.Node
	_, err = env.Admin.CoreV1().Pods(ns).Create(ctx, fixed, metav1.CreateOptions{})
	require.NoError(t, err)
	podwait.Until(t, env.Admin, ns, "fixed", 60*time.Second, "Running", podwait.MainRunning)

	for _, name := range []string{"missing", "fixed"} {
		require.NoError(t, env.Admin.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{}))
	}
	for _, name := range []string{"missing", "fixed"} {
		podwait.Gone(t, env.Admin, ns, name, 60*time.Second)
	}
	nothingLeft(t)
}

// watchPulls watches the "Pulling" events of pod namespace/name from now on; the function it
// returns gives the moments each pull was reported (a repeated event is one object whose
// count grows, or another object).
func watchPulls(t *testing.T, namespace, name string) func() []time.Time {
	t.Helper()
	var (
		mu     sync.Mutex
		at     []time.Time
		counts = map[string]int32{} // by Event name
	)
	watchFromNow(t, func(ctx context.Context) (watch.Interface, error) {
		return env.Admin.CoreV1().Events(namespace).Watch(ctx, metav1.ListOptions{
			FieldSelector: fields.Set{"involvedObject.name": name, "reason": "Pulling"}.String()})
	}, func(ev watch.Event) {
		e, ok := ev.Object.(*corev1.Event)
		if !ok || ev.Type == watch.Deleted {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		for n := max(e.Count, 1); counts[e.Name] < n; counts[e.Name]++ {
			at = append(at, time.Now())
		}
	})
	return func() []time.Time {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(at)
	}
}

// watchWaitingReasons watches pod namespace/name from now on; the function it returns gives
// the waiting reasons container main had in the statuses seen, in order, each once.
func watchWaitingReasons(t *testing.T, namespace, name string) func() []string {
	t.Helper()
	var (
		mu      sync.Mutex
		reasons []string
	)
	watchPods(t, namespace, "metadata.name", name, func(_ watch.EventType, p *corev1.Pod) {
		if cs := podwait.MainStatus(p); cs != nil && cs.State.Waiting != nil {
			mu.Lock()
			defer mu.Unlock()
			if !slices.Contains(reasons, cs.State.Waiting.Reason) {
				reasons = append(reasons, cs.State.Waiting.Reason)
			}
		}
	})
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(reasons)
	}
}

// eventMessages are the messages of pod namespace/name's events with reason, one a line.
func eventMessages(t require.TestingT, namespace, name, reason string) string {
	list, err := env.Admin.CoreV1().Events(namespace).List(context.Background(), metav1.ListOptions{
		FieldSelector: fields.Set{"involvedObject.name": name, "reason": reason}.String()})
	require.NoError(t, err)
	var msgs []string
	for _, e := range list.Items {
		msgs = append(msgs, e.Message)
	}
	return strings.Join(msgs, "\n")
}
