package node_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"

	"github.com/vk-static/vk-static/kubeclient/kubeclienttest"
	"github.com/vk-static/vk-static/mirror"
	"github.com/vk-static/vk-static/node"
	"github.com/vk-static/vk-static/podutil"
	"github.com/vk-static/vk-static/sources"
)

// scriptedMirrors is a mirror.Client over an in-memory "API server" whose answers the test
// scripts: the NotFound of a starting API server for a delete, a refusal for a create.
type scriptedMirrors struct {
	mu      sync.Mutex
	server  map[string]types.UID // full name → mirror UID the API server holds
	next    int
	creates []string // hashes, in order
	deletes int
	// notFoundDeletes is how many deletes still answer 404 while the mirror exists.
	notFoundDeletes int
	// refuseCreates is how many creates are still refused (Forbidden).
	refuseCreates int
}

func (m *scriptedMirrors) CreateMirrorPod(_ context.Context, pod *corev1.Pod) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	key := podutil.FullName(pod)
	if m.refuseCreates > 0 {
		m.refuseCreates--
		return apierrors.NewForbidden(corev1.Resource("pods"), pod.Name, fmt.Errorf("node %q not found", pod.Spec.NodeName))
	}
	if _, ok := m.server[key]; ok {
		return fmt.Errorf("%w: %w", mirror.ErrMirrorExists, apierrors.NewAlreadyExists(corev1.Resource("pods"), pod.Name))
	}
	m.next++
	m.server[key] = types.UID(fmt.Sprintf("mirror-%d", m.next))
	m.creates = append(m.creates, podutil.Hash(pod))
	return nil
}

func (m *scriptedMirrors) DeleteMirrorPod(_ context.Context, key string, uid *types.UID) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.deletes++
	have, ok := m.server[key]
	if !ok || (uid != nil && *uid != have) {
		return false, nil
	}
	if m.notFoundDeletes > 0 {
		m.notFoundDeletes--
		return false, nil // NodeRestriction's 404 before its informer has synced
	}
	delete(m.server, key)
	return true, nil
}

// mirrorOf is the pod the API source would deliver for the mirror the server holds under key.
func (m *scriptedMirrors) mirrorOf(static *corev1.Pod) *corev1.Pod {
	m.mu.Lock()
	defer m.mu.Unlock()
	uid, ok := m.server[podutil.FullName(static)]
	if !ok {
		return nil
	}
	ann := map[string]string{
		podutil.ConfigSourceAnnotationKey: podutil.APIServerSource,
		podutil.ConfigMirrorAnnotationKey: podutil.Hash(static),
		podutil.ConfigHashAnnotationKey:   podutil.Hash(static),
	}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: static.Name, Namespace: static.Namespace, UID: uid, Annotations: ann}, Spec: static.Spec}
}

func (m *scriptedMirrors) createdHashes() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.creates...)
}

// withAPI is a PodController with an API server whose mirror answers are scripted; the test
// plays both the file source and the API source's watch.
type withAPI struct {
	*standalone
	mirrors  *scriptedMirrors
	recorder *record.FakeRecorder
}

func newWithAPI(t *testing.T, syncFrequency time.Duration) *withAPI {
	t.Helper()
	h := &withAPI{mirrors: &scriptedMirrors{server: map[string]types.UID{}}, recorder: record.NewFakeRecorder(100)}
	liveNode := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "node-uid"}}
	h.standalone = startController(t, nil, func(cfg *node.PodControllerConfig) {
		cfg.Mirrors = h.mirrors
		cfg.Client = kubeclienttest.Wrap(fake.NewClientset())
		cfg.Node = mirror.NodeGetterFunc(func(string) (*corev1.Node, error) { return liveNode, nil })
		cfg.Recorder = h.recorder
		cfg.SyncFrequency = syncFrequency
	})
	h.send(sources.PodUpdate{Op: sources.ADD, Source: podutil.APIServerSource, SourceSeen: true})
	return h
}

// watchMirror delivers the mirror the server now holds for static through the API source.
func (h *withAPI) watchMirror(static *corev1.Pod) *corev1.Pod {
	h.t.Helper()
	m := h.mirrors.mirrorOf(static)
	if m == nil {
		h.t.Fatalf("the API server holds no mirror for %s", podutil.FullName(static))
	}
	h.send(sources.PodUpdate{Op: sources.ADD, Source: podutil.APIServerSource, Pods: []*corev1.Pod{m}})
	return m
}

func (h *withAPI) waitCreated(hashes ...string) {
	h.t.Helper()
	require.EventuallyWithT(h.t, func(c *assert.CollectT) {
		assert.Equal(c, hashes, h.mirrors.createdHashes(), "mirrors created")
	}, 10*time.Second, 5*time.Millisecond, "mirrors %v created", hashes)
}

// The sequence behind the stale mirror that survived an API-server outage: the manifest is
// edited, the delete of the old mirror reaches an API server that is still starting and gets a
// 404 although the mirror exists (the watch still lists it), and the create then meets
// AlreadyExists. Neither answer is final: the controller retries until the new mirror exists.
// The resync is an hour away, so only the retry can make this pass.
func TestMirrorDeleteAnswered404WhileStillListed(t *testing.T) {
	h := newWithAPI(t, time.Hour)
	v1 := staticPod("web", "1")
	h.send(sources.PodUpdate{Op: sources.ADD, Source: podutil.FileSource, Pods: []*corev1.Pod{v1}, SourceSeen: true})
	h.waitCreated("web-1")
	old := h.watchMirror(v1)

	h.mirrors.mu.Lock()
	h.mirrors.notFoundDeletes = 5
	h.mirrors.mu.Unlock()
	v2 := staticPod("web", "2")
	h.send(sources.PodUpdate{Op: sources.REMOVE, Source: podutil.FileSource, Pods: []*corev1.Pod{v1}})
	h.send(sources.PodUpdate{Op: sources.ADD, Source: podutil.FileSource, Pods: []*corev1.Pod{v2}})

	h.waitCreated("web-1", "web-2")
	h.send(sources.PodUpdate{Op: sources.REMOVE, Source: podutil.APIServerSource, Pods: []*corev1.Pod{old}})
	h.watchMirror(v2)
	h.mirrors.mu.Lock()
	defer h.mirrors.mu.Unlock()
	if h.mirrors.deletes < 6 {
		t.Errorf("%d deletes: the five 404s were not retried", h.mirrors.deletes)
	}
}

// A refusal that lasts a moment — kubeadm's mirrors reach an API server that has just started
// and has not yet made its system PriorityClasses, and are Forbidden for naming
// system-node-critical — is decided again within seconds, not at the next resync (an hour here,
// a minute by default, while the kubelet retries at its next probe-driven sync): the refused
// mirror has a back-off of its own.
func TestRefusedMirrorIsRetriedBeforeTheResync(t *testing.T) {
	h := newWithAPI(t, time.Hour)
	h.mirrors.mu.Lock()
	h.mirrors.refuseCreates = 2
	h.mirrors.mu.Unlock()
	p := staticPod("web", "1")
	h.send(sources.PodUpdate{Op: sources.ADD, Source: podutil.FileSource, Pods: []*corev1.Pod{p}, SourceSeen: true})
	h.waitCreated("web-1")
}

// A mirror the API server refuses is reported once and created by a later retry (the refusal's
// back-off, capped at the resync period: 50 ms here), with no event telling the controller to
// try again.
func TestRefusedMirrorIsRetriedOnResync(t *testing.T) {
	h := newWithAPI(t, 50*time.Millisecond)
	h.mirrors.mu.Lock()
	h.mirrors.refuseCreates = 3
	h.mirrors.mu.Unlock()
	p := staticPod("web", "1")
	h.send(sources.PodUpdate{Op: sources.ADD, Source: podutil.FileSource, Pods: []*corev1.Pod{p}, SourceSeen: true})
	h.waitCreated("web-1")

	var failed int
	for len(h.recorder.Events) > 0 {
		if e := <-h.recorder.Events; strings.Contains(e, "FailedMirror") {
			failed++
		}
	}
	if failed != 1 {
		t.Errorf("%d FailedMirror events for three identical refusals, want 1", failed)
	}
}
