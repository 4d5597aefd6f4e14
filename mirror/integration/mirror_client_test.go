package integration

import (
	"context"
	"errors"
	"net/http"
	"os"
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
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/kubeclient/kubeclienttest"
	"github.com/vk-static/vk-static/mirror"
	"github.com/vk-static/vk-static/podutil"
	"github.com/vk-static/vk-static/test/support/podwait"
	"github.com/vk-static/vk-static/test/support/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, &env)) }

// agent is what the pod sync loop would hold: a clientset with the node identity (whose
// requests are recorded) and a mirror client built on it.
type agent struct {
	node     string
	client   kubernetes.Interface
	mirrors  mirror.Client
	requests *requestLog
}

func newAgent(t *testing.T, node string) *agent {
	t.Helper()
	cfg, err := env.NodeConfig(node)
	require.NoError(t, err)
	log := &requestLog{}
	cfg.WrapTransport = log.wrap
	cs, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	// The node getter reads the live Node with the node's own identity, as a lister fed by
	// the agent's Node informer would.
	getter := mirror.NodeGetterFunc(func(name string) (*corev1.Node, error) {
		return cs.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	})
	return &agent{node: node, client: cs, mirrors: mirror.NewBasicMirrorClient(kubeclienttest.Wrap(cs), node, getter), requests: log}
}

// registerNode creates the agent's Node with its own identity (as NodeRestriction allows) and
// deletes it, as admin, when the test ends.
func (a *agent) registerNode(t *testing.T) *corev1.Node {
	t.Helper()
	node, err := a.client.CoreV1().Nodes().Create(context.Background(),
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: a.node}}, metav1.CreateOptions{})
	require.NoError(t, err, "node creating its own Node")
	t.Cleanup(func() { _ = env.Admin.CoreV1().Nodes().Delete(context.Background(), a.node, metav1.DeleteOptions{}) })
	return node
}

// staticPod builds by hand what sources/ decodes from a manifest on this node.
func staticPod(name, namespace, node string, uid types.UID) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name + "-" + node, Namespace: namespace, UID: uid,
			Labels: map[string]string{"app": name},
			Annotations: map[string]string{
				podutil.ConfigSourceAnnotationKey: podutil.FileSource,
				podutil.ConfigHashAnnotationKey:   string(uid),
			},
		},
		Spec: corev1.PodSpec{
			NodeName:   node,
			Containers: []corev1.Container{{Name: "main", Image: "busybox", Command: []string{"sleep", "3600"}}},
		},
	}
}

// requestLog records the method and path of every request a clientset sends.
type requestLog struct {
	mu   sync.Mutex
	sent []string
}

func (l *requestLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		l.mu.Lock()
		l.sent = append(l.sent, req.Method+" "+req.URL.Path)
		l.mu.Unlock()
		return rt.RoundTrip(req)
	})
}

// podWrites returns the recorded requests that would change a pod.
func (l *requestLog) podWrites() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, r := range l.sent {
		if strings.Contains(r, "/pods") && !strings.HasPrefix(r, http.MethodGet) {
			out = append(out, r)
		}
	}
	return out
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func getPod(t *testing.T, namespace, name string) (*corev1.Pod, bool) {
	t.Helper()
	pod, err := env.Admin.CoreV1().Pods(namespace).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, false
	}
	require.NoError(t, err)
	return pod, true
}

// reconcile runs one step of what the pod sync loop does for this full name: read the
// mirror, Decide, act. It returns the action taken.
func (a *agent) reconcile(t *testing.T, static *corev1.Pod) mirror.Action {
	t.Helper()
	ctx := context.Background()
	m, found := getPod(t, static.Namespace, static.Name)
	_, err := mirror.UsableNode(mirror.NodeGetterFunc(func(name string) (*corev1.Node, error) {
		return env.Admin.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	}), a.node)
	if err != nil {
		require.ErrorIs(t, err, mirror.ErrNodeUnavailable)
	}
	in := mirror.DecisionInput{Static: static, NodeUsable: err == nil}
	if found {
		in.Mirror = m
	}
	action := mirror.Decide(in)
	switch action {
	case mirror.Recreate, mirror.Delete:
		deleted, err := a.mirrors.DeleteMirrorPod(ctx, podutil.FullName(m), ptr.To(m.UID))
		require.NoError(t, err)
		require.True(t, deleted)
		if action == mirror.Recreate {
			require.NoError(t, a.mirrors.CreateMirrorPod(ctx, static))
		}
	case mirror.Create:
		require.NoError(t, a.mirrors.CreateMirrorPod(ctx, static))
	}
	return action
}

// assertMirrorOf checks what the kubelet's e2e validateMirrorPod checks after every one of its
// cases, and every test here calls it: hash and mirror annotations equal and non-empty, a
// non-"api" source, and exactly one controller owner reference to the live Node (whose UID
// TestMirrorPodLifecycle compares with the Node read back). mirror.TestCreateMirrorPodRequest
// pins the same on the request itself.
func assertMirrorOf(t *testing.T, got, static *corev1.Pod, node *corev1.Node) {
	t.Helper()
	assert.True(t, mirror.IsMirrorOf(got, static), "mirror annotations: %v", got.Annotations)
	assert.Equal(t, podutil.Hash(static), got.Annotations[podutil.ConfigHashAnnotationKey])
	assert.Equal(t, podutil.FileSource, got.Annotations[podutil.ConfigSourceAnnotationKey])
	assert.Equal(t, static.Labels, got.Labels)
	assert.Equal(t, []metav1.OwnerReference{{
		APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID, Controller: ptr.To(true),
	}}, got.OwnerReferences)
	assert.Equal(t, static.Spec.NodeName, got.Spec.NodeName)
	assert.NotEqual(t, static.UID, got.UID, "the API server assigns the mirror its own UID")
}

// TestMirrorPodLifecycle walks one mirror through create, a stale delete, a real delete and
// creation again, as system:node:<name>.
func TestMirrorPodLifecycle(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	a := newAgent(t, "mirror-lifecycle")
	node := a.registerNode(t)
	static := staticPod("web", ns, a.node, "hash-1")

	require.NoError(t, a.mirrors.CreateMirrorPod(ctx, static), "NodeRestriction admits the node's own mirror")
	got, ok := getPod(t, ns, static.Name)
	require.True(t, ok)
	assertMirrorOf(t, got, static, node)
	live, err := env.Admin.CoreV1().Nodes().Get(ctx, a.node, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, live.UID, got.OwnerReferences[0].UID, "owner reference UID is the live Node's")

	t.Run("create again: exists, caller re-checks", func(t *testing.T) {
		err := a.mirrors.CreateMirrorPod(ctx, static)
		assert.ErrorIs(t, err, mirror.ErrMirrorExists)
		assert.True(t, apierrors.IsAlreadyExists(err))
	})

	t.Run("delete with a stale UID is a no-op", func(t *testing.T) {
		deleted, err := a.mirrors.DeleteMirrorPod(ctx, podutil.FullName(static), ptr.To(types.UID("not-the-current-uid")))
		require.NoError(t, err)
		assert.False(t, deleted)
		still, ok := getPod(t, ns, static.Name)
		require.True(t, ok, "the current mirror must survive a stale delete")
		assert.Equal(t, got.UID, still.UID)
		assert.Nil(t, still.DeletionTimestamp)
	})

	t.Run("delete the current mirror", func(t *testing.T) {
		deleted, err := a.mirrors.DeleteMirrorPod(ctx, podutil.FullName(static), ptr.To(got.UID))
		require.NoError(t, err)
		assert.True(t, deleted)
		podwait.Gone(t, env.Admin, ns, static.Name, 30*time.Second)
		deleted, err = a.mirrors.DeleteMirrorPod(ctx, podutil.FullName(static), ptr.To(got.UID))
		require.NoError(t, err, "deleting what is gone is nothing to do")
		assert.False(t, deleted)
	})

	t.Run("created again with a new UID", func(t *testing.T) {
		assert.Equal(t, mirror.Create, a.reconcile(t, static))
		again, ok := getPod(t, ns, static.Name)
		require.True(t, ok)
		assert.NotEqual(t, got.UID, again.UID)
		assertMirrorOf(t, again, static, node)
		assert.Equal(t, mirror.None, a.reconcile(t, static), "a current mirror is left alone")
	})
}

// TestMirrorRecreatedAfterUserDeletes covers the kubelet e2e "should be recreated when mirror
// pod gracefully deleted" and "... forcibly deleted" (conformance: Mirror Pod, delete and force
// delete) at the client level: the deletion is seen, Decide says what to do (the "mirror
// deleted by a user" row of mirror.TestDecide), and the agent's own identity brings the mirror
// back.
func TestMirrorRecreatedAfterUserDeletes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		grace int64
		want  mirror.Action
	}{
		// A bound pod deleted with a grace period stays, with a deletionTimestamp, until its
		// node confirms: the agent deletes it for good and creates a new one.
		{"gracefully", 30, mirror.Recreate},
		// Grace 0 removes it at once: the agent only has to create.
		{"forcibly", 0, mirror.Create},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			ns := env.Namespace(t)
			a := newAgent(t, "mirror-user-delete-"+tc.name)
			node := a.registerNode(t)
			static := staticPod("web", ns, a.node, "hash-1")
			require.Equal(t, mirror.Create, a.reconcile(t, static))
			before, ok := getPod(t, ns, static.Name)
			require.True(t, ok)

			require.NoError(t, env.Admin.CoreV1().Pods(ns).Delete(ctx, static.Name, *metav1.NewDeleteOptions(tc.grace)))
			if tc.grace == 0 {
				podwait.Gone(t, env.Admin, ns, static.Name, 30*time.Second)
			} else {
				seen, ok := getPod(t, ns, static.Name)
				require.True(t, ok, "a bound pod deleted gracefully waits for its node")
				require.NotNil(t, seen.DeletionTimestamp)
			}

			assert.Equal(t, tc.want, a.reconcile(t, static))
			after, ok := getPod(t, ns, static.Name)
			require.True(t, ok, "mirror recreated")
			assert.NotEqual(t, before.UID, after.UID)
			assert.Nil(t, after.DeletionTimestamp)
			assertMirrorOf(t, after, static, node)
		})
	}
}

// TestMirrorRecreatedAfterEdit covers the kubelet e2e "should be updated when static pod
// updated" (conformance: Mirror Pod, update): the manifest changed, so the static pod has a new
// hash; the old mirror is deleted and a new one with the new spec created. The "edited
// manifest" row of mirror.TestDecide and podmanager.TestStaticPodEditedWhileOldMirrorExists
// cover the decision and the lookups that lead here.
//
// It also covers the kubelet e2e Pod Generation cases ("update activeDeadlineSeconds / container
// image / initContainer image"): the mirror is recreated, so its generation is 1. That
// status.observedGeneration stays empty is the status writer's (node/) to keep.
func TestMirrorRecreatedAfterEdit(t *testing.T) {
	ns := env.Namespace(t)
	a := newAgent(t, "mirror-edit")
	node := a.registerNode(t)
	v1 := staticPod("web", ns, a.node, "hash-1")
	require.Equal(t, mirror.Create, a.reconcile(t, v1))
	before, _ := getPod(t, ns, v1.Name)

	v2 := staticPod("web", ns, a.node, "hash-2")
	v2.Spec.Containers[0].Image = "registry.k8s.io/pause:3.10"
	assert.Equal(t, mirror.Recreate, a.reconcile(t, v2))
	after, ok := getPod(t, ns, v2.Name)
	require.True(t, ok)
	assert.NotEqual(t, before.UID, after.UID)
	assert.Equal(t, "registry.k8s.io/pause:3.10", after.Spec.Containers[0].Image)
	assert.Equal(t, int64(1), after.Generation, "a recreated mirror starts at generation 1")
	assertMirrorOf(t, after, v2, node)
}

// TestOrphanedMirrorDeleted: the static pod is gone and has finished terminating; its
// mirror is deleted (the kubelet e2e, after each case: "delete the static pod, wait for the
// mirror pod to disappear"). Not before it finished: "should launch successfully even if it
// temporarily failed termination" needs the orphaned mirror left alone meanwhile (the orphan
// rows of mirror.TestDecide; waiting for the termination before starting the new pod is the
// pod sync loop's).
func TestOrphanedMirrorDeleted(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	a := newAgent(t, "mirror-orphan")
	a.registerNode(t)
	static := staticPod("web", ns, a.node, "hash-1")
	require.NoError(t, a.mirrors.CreateMirrorPod(ctx, static))
	m, _ := getPod(t, ns, static.Name)

	assert.Equal(t, mirror.None, mirror.Decide(mirror.DecisionInput{Mirror: m, NodeUsable: true}),
		"not while the static pod is still terminating")
	require.Equal(t, mirror.Delete, mirror.Decide(mirror.DecisionInput{Mirror: m, NodeUsable: true, StaticTerminated: true}))
	deleted, err := a.mirrors.DeleteMirrorPod(ctx, podutil.FullName(m), ptr.To(m.UID))
	require.NoError(t, err)
	assert.True(t, deleted)
	podwait.Gone(t, env.Admin, ns, static.Name, 30*time.Second)
}

// TestCreateRefusedWithoutUsableNode: no mirror is sent while the Node object is missing or
// being deleted — it would be owned by nothing (or by a Node about to go, and be garbage
// collected).
func TestCreateRefusedWithoutUsableNode(t *testing.T) {
	ctx := context.Background()

	t.Run("node missing", func(t *testing.T) {
		ns := env.Namespace(t)
		a := newAgent(t, "mirror-no-node")
		static := staticPod("web", ns, a.node, "hash-1")
		err := a.mirrors.CreateMirrorPod(ctx, static)
		require.ErrorIs(t, err, mirror.ErrNodeUnavailable)
		assert.True(t, apierrors.IsNotFound(err), "the cause is kept: %v", err)
		assert.Empty(t, a.requests.podWrites(), "refused before any pod request")
		_, found := getPod(t, ns, static.Name)
		assert.False(t, found)
		assert.Equal(t, mirror.None, a.reconcile(t, static), "Decide agrees: nothing to do without a node")
	})

	t.Run("node being deleted", func(t *testing.T) {
		ns := env.Namespace(t)
		a := newAgent(t, "mirror-node-deleting")
		node := a.registerNode(t)
		// A finalizer holds the Node in deletion; the test removes it at the end.
		node.Finalizers = []string{"vk-static.test/hold"}
		_, err := env.Admin.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{})
		require.NoError(t, err)
		t.Cleanup(func() { releaseNode(t, a.node) })
		require.NoError(t, env.Admin.CoreV1().Nodes().Delete(ctx, a.node, metav1.DeleteOptions{}))

		static := staticPod("web", ns, a.node, "hash-1")
		err = a.mirrors.CreateMirrorPod(ctx, static)
		require.ErrorIs(t, err, mirror.ErrNodeUnavailable)
		assert.Contains(t, err.Error(), "being deleted")
		assert.Empty(t, a.requests.podWrites(), "refused before any pod request")
		_, found := getPod(t, ns, static.Name)
		assert.False(t, found)
	})
}

func releaseNode(t *testing.T, name string) {
	ctx := context.Background()
	node, err := env.Admin.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return
	}
	node.Finalizers = nil
	if _, err := env.Admin.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("release node %s: %v", name, err)
	}
}

// TestMirrorOfAnotherNodeRefused: NodeRestriction lets a node own only its own mirrors; the
// client refuses a pod bound elsewhere before sending it, so this proves the server side too.
func TestMirrorOfAnotherNodeRefused(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	a := newAgent(t, "mirror-self")
	a.registerNode(t)
	other := staticPod("web", ns, "someone-else", "hash-1")
	err := a.mirrors.CreateMirrorPod(ctx, other)
	assert.ErrorIs(t, err, mirror.ErrNotStatic)
	assert.Empty(t, a.requests.podWrites())
}

// TestMirrorReferencingSecretRefused documents why sources/ rejects static pods that
// reference API objects: the API server refuses their mirrors. The ServiceAccount admission
// plugin answers first ("a mirror pod may not reference secrets"; likewise service accounts and
// config maps), and NodeRestriction would refuse it next (a node "can not create pods that
// reference secrets", nor config maps, PVCs or resource claims). Such a static pod could run
// but never be visible in the cluster, and the mirror reconcile would fail forever, so
// sources/ reports the manifest at decode time instead.
func TestMirrorReferencingSecretRefused(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	a := newAgent(t, "mirror-secret")
	a.registerNode(t)
	static := staticPod("web", ns, a.node, "hash-1")
	static.Spec.Volumes = []corev1.Volume{{
		Name:         "creds",
		VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "db-password"}},
	}}
	err := a.mirrors.CreateMirrorPod(ctx, static)
	require.Error(t, err)
	assert.True(t, apierrors.IsForbidden(err), "want Forbidden, got %v", err)
	assert.Contains(t, err.Error(), "a mirror pod may not reference secrets")
	assert.False(t, errors.Is(err, mirror.ErrMirrorExists))
	_, found := getPod(t, ns, static.Name)
	assert.False(t, found)
}
