package node_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/kubeclient/kubeclienttest"
	"github.com/vk-static/vk-static/mirror"
	"github.com/vk-static/vk-static/node"
	"github.com/vk-static/vk-static/podmanager"
	"github.com/vk-static/vk-static/podutil"
	"github.com/vk-static/vk-static/provider"
	"github.com/vk-static/vk-static/provider/mock"
	"github.com/vk-static/vk-static/sources"
)

// standalone is a PodController without an API server, fed updates by the test.
type standalone struct {
	t        *testing.T
	provider *mock.Provider
	updates  chan sources.PodUpdate
	ctrl     *node.PodController
	cancel   context.CancelFunc
}

// newStandalone builds the controller; preload runs in the provider before the controller
// starts (an agent restart).
func newStandalone(t *testing.T, workers int, preload ...*corev1.Pod) *standalone {
	t.Helper()
	return startController(t, preload, func(cfg *node.PodControllerConfig) { cfg.Workers = workers })
}

// startController runs a PodController on a mock provider (preload already running in it), fed
// updates by the test, configured standalone and then by configure; it is stopped, and checked
// for leaked goroutines, when the test ends.
func startController(t *testing.T, preload []*corev1.Pod, configure func(*node.PodControllerConfig)) *standalone {
	t.Helper()
	baseline := goleak.IgnoreCurrent()
	p, err := mock.New(mock.Config{NodeName: "n1", InternalIP: "127.0.0.1", RecordCalls: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, pod := range preload {
		if err := p.CreatePod(context.Background(), pod); err != nil {
			t.Fatal(err)
		}
	}
	h := &standalone{t: t, provider: p, updates: make(chan sources.PodUpdate)}
	cfg := node.PodControllerConfig{NodeName: "n1", Provider: p, Pods: podmanager.NewBasicPodManager(), Updates: h.updates}
	configure(&cfg)
	if h.ctrl, err = node.NewPodController(cfg); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() { _ = h.ctrl.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-h.ctrl.Done()
		goleak.VerifyNone(t, baseline)
	})
	<-h.ctrl.Ready()
	return h
}

func (h *standalone) send(u sources.PodUpdate) {
	h.t.Helper()
	select {
	case h.updates <- u:
	case <-time.After(10 * time.Second):
		h.t.Fatalf("controller did not take update %v", u.Op)
	}
}

func (h *standalone) calls(p *corev1.Pod) mock.Calls { return h.provider.Calls(p.UID) }

func staticPod(name, version string, annotations ...string) *corev1.Pod {
	uid := types.UID(name + "-" + version)
	ann := map[string]string{
		podutil.ConfigSourceAnnotationKey: podutil.FileSource,
		podutil.ConfigHashAnnotationKey:   string(uid),
	}
	for i := 0; i+1 < len(annotations); i += 2 {
		ann[annotations[i]] = annotations[i+1]
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-n1", Namespace: "default", UID: uid, Annotations: ann},
		Spec: corev1.PodSpec{
			NodeName:                      "n1",
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers:                    []corev1.Container{{Name: "c", Image: "img:" + version}},
		},
	}
}

// After a restart the provider's pods are matched against the sources: a pod still wanted is
// adopted (not created again); one the source no longer has is stopped — but only once that
// source has been seen.
func TestAdoptedPodsWaitForTheirSource(t *testing.T) {
	kept, dropped, later := staticPod("kept", "1"), staticPod("dropped", "1"), staticPod("later", "1")
	h := newStandalone(t, 1, kept, dropped) // one worker: keys are synced in the order queued

	h.send(sources.PodUpdate{Op: sources.ADD, Source: podutil.FileSource, Pods: []*corev1.Pod{kept, later}})
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, 1, h.calls(later).Create, "CreatePod calls")
	}, 10*time.Second, 5*time.Millisecond, "later created")
	// Every key queued before later's has been synced: nothing was stopped yet.
	if c := h.calls(dropped).Delete; c != 0 {
		t.Fatalf("a pod was stopped before its source was seen (DeletePod calls %d)", c)
	}

	h.send(sources.PodUpdate{Op: sources.ADD, Source: podutil.FileSource, SourceSeen: true})
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		_, err := h.provider.GetPod(context.Background(), "default", dropped.Name)
		assert.True(c, provider.IsNotFound(err), "still in the provider (%v)", err)
	}, 10*time.Second, 5*time.Millisecond, "dropped stopped")
	if c := h.calls(kept); c.Create != 1 || c.Delete != 0 {
		t.Errorf("the wanted pod was not simply adopted: %+v", c)
	}
}

// An edited static pod (new UID, same name) starts only once the old one has terminated, and
// many rapid edits end with the newest running and nothing leaked.
func TestEditedStaticPodWaitsForTheOldOne(t *testing.T) {
	h := newStandalone(t, 4)
	slow := []string{mock.DeleteDelayAnnotation, mock.DeleteDelayGrace} // takes its whole grace period (1 s)
	v1 := staticPod("web", "1", slow...)
	h.send(sources.PodUpdate{Op: sources.ADD, Source: podutil.FileSource, Pods: []*corev1.Pod{v1}, SourceSeen: true})
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, 1, h.calls(v1).Create, "CreatePod calls")
	}, 10*time.Second, 5*time.Millisecond, "v1 running")

	prev := v1
	var last *corev1.Pod
	for i := 2; i <= 20; i++ {
		last = staticPod("web", fmt.Sprint(i), slow...)
		h.send(sources.PodUpdate{Op: sources.REMOVE, Source: podutil.FileSource, Pods: []*corev1.Pod{prev}})
		h.send(sources.PodUpdate{Op: sources.ADD, Source: podutil.FileSource, Pods: []*corev1.Pod{last}})
		prev = last
	}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		p, err := h.provider.GetPod(context.Background(), "default", last.Name)
		require.NoError(c, err)
		if p.UID != last.UID || p.Status.Phase != corev1.PodRunning {
			c.Errorf("provider runs %s (%s)", p.UID, p.Status.Phase)
		}
	}, 10*time.Second, 5*time.Millisecond, "newest running")
	// The mock refuses (and counts) a CreatePod while the name is still taken: exactly one call
	// proves the controller waited for the old pod to terminate.
	if c := h.calls(last); c.Create != 1 {
		t.Errorf("newest pod: CreatePod calls %d, want exactly 1", c.Create)
	}
	if c := h.calls(v1); c.Delete != 1 {
		t.Errorf("v1: DeletePod calls %d, want 1", c.Delete)
	}
	if n := h.provider.Len(); n != 1 {
		t.Errorf("provider runs %d pods, want 1", n)
	}
}

// A removed static pod is stopped with its grace period.
func TestRemovedStaticPodIsStopped(t *testing.T) {
	h := newStandalone(t, 2)
	p := staticPod("web", "1")
	h.send(sources.PodUpdate{Op: sources.ADD, Source: podutil.FileSource, Pods: []*corev1.Pod{p}, SourceSeen: true})
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, 1, h.provider.Len(), "pods in the provider")
	}, 10*time.Second, 5*time.Millisecond, "running")
	h.send(sources.PodUpdate{Op: sources.REMOVE, Source: podutil.FileSource, Pods: []*corev1.Pod{p}})
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, 0, h.provider.Len(), "pods in the provider")
	}, 10*time.Second, 5*time.Millisecond, "stopped")
}

// After a restart, a pod the provider runs whose manifest file still exists but no longer
// decodes is kept (bad input never takes a running pod down), while a pod whose manifest is gone
// is stopped; once the unreadable file is removed too, its pod is stopped.
func TestPodOfUnreadableManifestIsKeptAfterRestart(t *testing.T) {
	kept := staticPod("kept", "1", podutil.ConfigFileAnnotationKey, "/m/kept.yaml")
	dropped := staticPod("dropped", "1", podutil.ConfigFileAnnotationKey, "/m/dropped.yaml")
	later := staticPod("later", "1")
	h := newStandalone(t, 1, kept, dropped) // one worker: keys are synced in the order queued

	// The file source's first snapshot, as the merger delivers it: kept.yaml does not decode.
	h.send(sources.PodUpdate{Op: sources.RECONCILE, Source: podutil.FileSource, Unreadable: map[string]bool{"/m/kept.yaml": true}})
	h.send(sources.PodUpdate{Op: sources.ADD, Source: podutil.FileSource, SourceSeen: true})
	h.send(sources.PodUpdate{Op: sources.ADD, Source: podutil.HTTPSource, Pods: []*corev1.Pod{later}})
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		_, err := h.provider.GetPod(context.Background(), "default", dropped.Name)
		assert.True(c, provider.IsNotFound(err), "dropped still in the provider (%v)", err)
		assert.Equal(c, 1, h.calls(later).Create, "later: CreatePod calls")
	}, 10*time.Second, 5*time.Millisecond, "dropped stopped and later created")
	// kept was queued before later, so its sync is done: it was not stopped.
	if c := h.calls(kept); c.Delete != 0 {
		t.Fatalf("the pod of an unreadable manifest was stopped (DeletePod calls %d)", c.Delete)
	}

	h.send(sources.PodUpdate{Op: sources.RECONCILE, Source: podutil.FileSource, Unreadable: map[string]bool{}})
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		_, err := h.provider.GetPod(context.Background(), "default", kept.Name)
		assert.True(c, provider.IsNotFound(err), "still in the provider (%v)", err)
	}, 10*time.Second, 5*time.Millisecond, "kept stopped once its file is gone")
}

// A provider that cannot list its pods stops the controller before it starts: Run returns the
// error, and nothing the controller started — its work queues run from NewPodController on —
// outlives it.
func TestRunStopsEverythingWhenTheProviderCannotList(t *testing.T) {
	baseline := goleak.IgnoreCurrent()
	p := newFakeProvider(&transcript{}, clock.RealClock{})
	p.listErr = errors.New("backend unreachable")
	ctrl, err := node.NewPodController(node.PodControllerConfig{
		NodeName: "n1", Provider: p, Pods: podmanager.NewBasicPodManager(), Updates: make(chan sources.PodUpdate),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := ctrl.Run(context.Background()); !errors.Is(err, p.listErr) {
		t.Errorf("Run: %v, want the provider's error", err)
	}
	<-ctrl.Done()
	if !errors.Is(ctrl.Err(), p.listErr) {
		t.Errorf("Err: %v, want the provider's error", ctrl.Err())
	}
	goleak.VerifyNone(t, baseline)
}

// The pod manager holds pods and writes nothing: the controller takes the mirror client
// itself, with the API client, and refuses one without the other.
func TestMirrorsGoWithTheClient(t *testing.T) {
	p := newFakeProvider(&transcript{}, clock.RealClock{})
	client := kubeclienttest.Wrap(fake.NewClientset())
	nodes := mirror.NodeGetterFunc(func(string) (*corev1.Node, error) { return &corev1.Node{}, nil })
	_, err := node.NewPodController(node.PodControllerConfig{
		NodeName: "n1", Provider: p, Pods: podmanager.NewBasicPodManager(), Updates: make(chan sources.PodUpdate),
		Client: client, Node: nodes,
	})
	if err == nil || !strings.Contains(err.Error(), "Client and Mirrors go together") {
		t.Errorf("a Client without Mirrors: %v", err)
	}
}

// fromAPI is a pod from the API server, bound to n1, as the API source stamps it.
func fromAPI(name string) *corev1.Pod {
	p := apiPod(name, types.UID(name+"-uid"))
	p.Annotations = map[string]string{podutil.ConfigSourceAnnotationKey: podutil.APIServerSource}
	p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](1)
	return p
}

// The convergence rules of an agent restarted during an API server outage, on the pod
// controller's side: the API pods the provider restored run on, untouched, while the API
// source is not seen (the outage); once it is, a pod deleted meanwhile is stopped, and the
// pods still bound are adopted, never created a second time.
func TestAPIPodsAfterARestartDuringAnOutage(t *testing.T) {
	kept, deleted := fromAPI("kept"), fromAPI("deleted")
	static := staticPod("web", "1")
	h := newStandalone(t, 1, kept, deleted, static)

	// The outage: the file source is seen, the API source is not.
	h.send(sources.PodUpdate{Op: sources.ADD, Source: podutil.FileSource, Pods: []*corev1.Pod{static}, SourceSeen: true})
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, 1, h.calls(static).Create, "CreatePod calls (the preload)")
	}, 10*time.Second, 5*time.Millisecond)
	h.send(sources.PodUpdate{Op: sources.ADD, Source: podutil.FileSource})
	for _, p := range []*corev1.Pod{kept, deleted} {
		if c := h.calls(p); c.Delete != 0 || c.Create != 1 {
			t.Fatalf("%s touched while its source was not seen: %+v", p.Name, c)
		}
	}

	// The API server answers: kept is still bound, deleted is gone.
	h.send(sources.PodUpdate{Op: sources.ADD, Source: podutil.APIServerSource, Pods: []*corev1.Pod{kept}, SourceSeen: true})
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		_, err := h.provider.GetPod(context.Background(), "default", deleted.Name)
		assert.True(c, provider.IsNotFound(err), "still in the provider (%v)", err)
	}, 10*time.Second, 5*time.Millisecond, "the pod deleted during the outage stopped")
	if c := h.calls(kept); c.Create != 1 || c.Delete != 0 {
		t.Errorf("the pod still bound was not simply adopted: %+v", c)
	}
	if n := h.provider.Len(); n != 2 {
		t.Errorf("provider runs %d pods, want 2 (kept and the static one)", n)
	}
}
