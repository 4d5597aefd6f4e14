package mirror

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/kubeclient/kubeclienttest"
	"github.com/vk-static/vk-static/podutil"
)

func static(hash string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "etcd-node-a", Namespace: "kube-system", UID: types.UID(hash),
			Annotations: map[string]string{
				podutil.ConfigSourceAnnotationKey: podutil.FileSource,
				podutil.ConfigHashAnnotationKey:   hash,
			},
		},
		Spec: corev1.PodSpec{NodeName: "node-a"},
	}
}

func mirrorFor(hash string) *corev1.Pod {
	m := static(hash)
	m.UID = "mirror-of-" + types.UID(hash)
	m.Annotations[podutil.ConfigMirrorAnnotationKey] = hash
	return m
}

func deleting(p *corev1.Pod) *corev1.Pod {
	p = p.DeepCopy()
	p.DeletionTimestamp = &metav1.Time{}
	return p
}

// notAMirror is a pod under the mirror's name without the config.mirror annotation.
func notAMirror() *corev1.Pod {
	p := static("h1")
	p.UID = "someone-elses"
	p.Annotations = map[string]string{podutil.ConfigSourceAnnotationKey: podutil.APIServerSource}
	return p
}

type nodeState int

const (
	nodeReady nodeState = iota
	nodeMissing
	nodeDeleting
)

func (n nodeState) String() string {
	return [...]string{"node ready", "node missing", "node deleting"}[n]
}

func (n nodeState) apply(in DecisionInput) DecisionInput {
	in.NodeUsable = n != nodeMissing && n != nodeDeleting
	return in
}

// TestDecide is the decision table. Each row fixes the static pod and the mirror; the columns
// are the node's state and whether the previous static pod finished terminating. Every
// combination of the five inputs that matters is here: the mirror's kind (none, current, stale
// hash, being deleted, stale and being deleted, not a mirror) × static (present or not) × node
// (ready, missing, deleting) × terminated (yes, no).
//
// Rows answer the kubelet's e2e of mirror pods (test/e2e_node/mirror_pod_test.go): "edited
// manifest" — "should be updated when static pod updated"; "mirror deleted by a user" —
// "should be recreated when mirror pod gracefully deleted" (a forcibly deleted mirror is gone:
// "static pod, no mirror"); the orphan rows — "wait for the mirror pod to disappear" once the
// static pod is deleted, and not before it finished terminating ("should launch successfully
// even if it temporarily failed termination").
func TestDecide(t *testing.T) {
	type cell = [3]Action // indexed by nodeState
	for _, row := range []struct {
		name     string
		static   *corev1.Pod
		mirror   *corev1.Pod
		running  cell // StaticTerminated = false
		finished cell // StaticTerminated = true
	}{
		{"nothing at all", nil, nil,
			cell{None, None, None}, cell{None, None, None}},
		{"static pod, no mirror: create while the node can own it", static("h1"), nil,
			cell{Create, None, None}, cell{Create, None, None}},
		{"current mirror: nothing", static("h1"), mirrorFor("h1"),
			cell{None, None, None}, cell{None, None, None}},
		{"edited manifest (hash differs): recreate, or only delete without a node", static("h2"), mirrorFor("h1"),
			cell{Recreate, Delete, Delete}, cell{Recreate, Delete, Delete}},
		{"mirror deleted by a user (being deleted): recreate", static("h1"), deleting(mirrorFor("h1")),
			cell{Recreate, Delete, Delete}, cell{Recreate, Delete, Delete}},
		{"stale and being deleted: recreate", static("h2"), deleting(mirrorFor("h1")),
			cell{Recreate, Delete, Delete}, cell{Recreate, Delete, Delete}},
		{"orphan: delete only once the static pod terminated", nil, mirrorFor("h1"),
			cell{None, None, None}, cell{Delete, Delete, Delete}},
		{"orphan being deleted: finish it once terminated", nil, deleting(mirrorFor("h1")),
			cell{None, None, None}, cell{Delete, Delete, Delete}},
		{"not a mirror under the static pod's name: never touched", static("h1"), notAMirror(),
			cell{None, None, None}, cell{None, None, None}},
		{"not a mirror, no static pod: never touched", nil, notAMirror(),
			cell{None, None, None}, cell{None, None, None}},
	} {
		for _, terminated := range []bool{false, true} {
			want := row.running
			if terminated {
				want = row.finished
			}
			for _, node := range []nodeState{nodeReady, nodeMissing, nodeDeleting} {
				in := node.apply(DecisionInput{Static: row.static, Mirror: row.mirror, StaticTerminated: terminated})
				assert.Equal(t, want[node], Decide(in), "%s / %s / terminated=%v", row.name, node, terminated)
			}
		}
	}
}

// TestDecideInvariants states, over the same input space, the properties the table encodes,
// so that a new row cannot silently contradict them.
func TestDecideInvariants(t *testing.T) {
	statics := []*corev1.Pod{nil, static("h1"), static("h2")}
	mirrors := []*corev1.Pod{nil, mirrorFor("h1"), deleting(mirrorFor("h1")), notAMirror()}
	for _, s := range statics {
		for _, m := range mirrors {
			for _, node := range []nodeState{nodeReady, nodeMissing, nodeDeleting} {
				for _, terminated := range []bool{false, true} {
					in := node.apply(DecisionInput{Static: s, Mirror: m, StaticTerminated: terminated})
					got := Decide(in)
					desc := fmt.Sprintf("static=%s mirror=%s %s terminated=%v", describe(s), describe(m), node, terminated)
					if (got == Create || got == Recreate) && node != nodeReady {
						t.Errorf("%s: %s without a usable node", desc, got)
					}
					if (got == Create || got == Recreate) && s == nil {
						t.Errorf("%s: %s without a static pod", desc, got)
					}
					if got != None && m != nil && !podutil.IsMirrorPod(m) {
						t.Errorf("%s: %s on a pod that is not a mirror", desc, got)
					}
					if s == nil && m != nil && !terminated && got != None {
						t.Errorf("%s: orphan acted on (%s) before its static pod terminated", desc, got)
					}
					if (got == Create) != (m == nil && s != nil && node == nodeReady) {
						t.Errorf("%s: got %s", desc, got)
					}
				}
			}
		}
	}
}

func describe(p *corev1.Pod) string {
	switch {
	case p == nil:
		return "none"
	case p.DeletionTimestamp != nil:
		return fmt.Sprintf("%s(deleting)", p.UID)
	}
	return string(p.UID)
}

func TestActionString(t *testing.T) {
	for a, want := range map[Action]string{None: "None", Create: "Create", Recreate: "Recreate", Delete: "Delete", Action(9): "Action(9)"} {
		assert.Equal(t, want, a.String())
	}
}

func TestIsMirrorOf(t *testing.T) {
	noHash := static("")
	for _, tc := range []struct {
		name           string
		mirror, static *corev1.Pod
		want           bool
	}{
		{"current", mirrorFor("h1"), static("h1"), true},
		{"hash differs", mirrorFor("h1"), static("h2"), false},
		{"no config.mirror", static("h1"), static("h1"), false},
		{"static pod without a hash never matches", mirrorFor(""), noHash, false},
		{"nil mirror", nil, static("h1"), false},
		{"nil static", mirrorFor("h1"), nil, false},
	} {
		assert.Equal(t, tc.want, IsMirrorOf(tc.mirror, tc.static), tc.name)
	}
}

var podsResource = schema.GroupResource{Resource: "pods"}

func liveNode() *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a", UID: "node-uid-1"}}
}

func nodeGetter(node *corev1.Node, err error) NodeGetter {
	return NodeGetterFunc(func(name string) (*corev1.Node, error) {
		if name != "node-a" {
			return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "nodes"}, name)
		}
		return node, err
	})
}

func staticWithMeta() *corev1.Pod {
	p := static("h1")
	p.Labels = map[string]string{"component": "etcd"}
	p.Annotations["example.com/note"] = "kept"
	p.ResourceVersion = "17"
	p.Status.Phase = corev1.PodRunning
	p.Spec.Containers = []corev1.Container{{Name: "etcd", Image: "registry.k8s.io/etcd:3.6"}}
	return p
}

// TestCreateMirrorPodRequest pins the exact object sent: the static pod's name, namespace,
// labels, annotations (plus config.mirror) and spec, one controller owner reference to the
// live Node, and nothing that belongs to the agent (UID, resource version, status) — what the
// kubelet e2e's validateMirrorPod checks of every mirror.
func TestCreateMirrorPodRequest(t *testing.T) {
	cs := fake.NewClientset()
	c := NewBasicMirrorClient(kubeclienttest.Wrap(cs), "node-a", nodeGetter(liveNode(), nil))
	pod := staticWithMeta()
	before := pod.DeepCopy()
	require.NoError(t, c.CreateMirrorPod(context.Background(), pod))
	assert.Equal(t, before, pod, "the static pod must not be modified")

	actions := cs.Actions()
	require.Len(t, actions, 1)
	create, ok := actions[0].(k8stesting.CreateAction)
	require.True(t, ok, "want a create, got %v", actions[0])
	assert.Equal(t, "kube-system", create.GetNamespace())
	sent := create.GetObject().(*corev1.Pod)

	want := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "etcd-node-a", Namespace: "kube-system",
			Labels: map[string]string{"component": "etcd"},
			Annotations: map[string]string{
				podutil.ConfigSourceAnnotationKey: podutil.FileSource,
				podutil.ConfigHashAnnotationKey:   "h1",
				podutil.ConfigMirrorAnnotationKey: "h1",
				"example.com/note":                "kept",
			},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "Node", Name: "node-a", UID: "node-uid-1", Controller: ptr.To(true),
			}},
		},
		Spec: pod.Spec,
	}
	assert.Equal(t, want, sent)
	assert.True(t, IsMirrorOf(sent, pod))
}

func TestCreateMirrorPodRefusedBeforeAnyRequest(t *testing.T) {
	missing := apierrors.NewNotFound(schema.GroupResource{Resource: "nodes"}, "node-a")
	terminating := liveNode()
	terminating.DeletionTimestamp = &metav1.Time{}
	noUID := liveNode()
	noUID.UID = ""
	otherNode := staticWithMeta()
	otherNode.Spec.NodeName = "node-b"
	noHash := staticWithMeta()
	delete(noHash.Annotations, podutil.ConfigHashAnnotationKey)
	isMirror := mirrorFor("h1")

	for _, tc := range []struct {
		name   string
		getter NodeGetter
		pod    *corev1.Pod
		want   error
	}{
		{"node missing", nodeGetter(nil, missing), staticWithMeta(), ErrNodeUnavailable},
		{"node getter returns nothing", nodeGetter(nil, nil), staticWithMeta(), ErrNodeUnavailable},
		{"node being deleted", nodeGetter(terminating, nil), staticWithMeta(), ErrNodeUnavailable},
		{"node without UID", nodeGetter(noUID, nil), staticWithMeta(), ErrNodeUnavailable},
		{"pod bound to another node", nodeGetter(liveNode(), nil), otherNode, ErrNotStatic},
		{"pod without hash", nodeGetter(liveNode(), nil), noHash, ErrNotStatic},
		{"pod is a mirror", nodeGetter(liveNode(), nil), isMirror, ErrNotStatic},
		{"nil pod", nodeGetter(liveNode(), nil), nil, ErrNotStatic},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := fake.NewClientset()
			err := NewBasicMirrorClient(kubeclienttest.Wrap(cs), "node-a", tc.getter).CreateMirrorPod(context.Background(), tc.pod)
			assert.ErrorIs(t, err, tc.want)
			assert.Empty(t, cs.Actions(), "nothing may be sent")
		})
	}
	t.Run("node missing keeps the API error", func(t *testing.T) {
		err := NewBasicMirrorClient(kubeclienttest.Wrap(fake.NewClientset()), "node-a", nodeGetter(nil, missing)).
			CreateMirrorPod(context.Background(), staticWithMeta())
		assert.True(t, apierrors.IsNotFound(err), "cause must stay visible: %v", err)
	})
}

func TestCreateMirrorPodWithoutNodeGetterReadsTheNode(t *testing.T) {
	cs := fake.NewClientset(liveNode())
	c := NewBasicMirrorClient(kubeclienttest.Wrap(cs), "node-a", nil)
	require.NoError(t, c.CreateMirrorPod(context.Background(), staticWithMeta()))
	sent, err := cs.CoreV1().Pods("kube-system").Get(context.Background(), "etcd-node-a", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, types.UID("node-uid-1"), sent.OwnerReferences[0].UID)

	empty := fake.NewClientset()
	err = NewBasicMirrorClient(kubeclienttest.Wrap(empty), "node-a", nil).CreateMirrorPod(context.Background(), staticWithMeta())
	assert.ErrorIs(t, err, ErrNodeUnavailable)
	for _, a := range empty.Actions() {
		assert.NotEqual(t, "create", a.GetVerb(), "no create after the node GET failed")
	}
}

func TestCreateMirrorPodAlreadyExists(t *testing.T) {
	existing := mirrorFor("h0")
	cs := fake.NewClientset(existing)
	err := NewBasicMirrorClient(kubeclienttest.Wrap(cs), "node-a", nodeGetter(liveNode(), nil)).CreateMirrorPod(context.Background(), staticWithMeta())
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrMirrorExists)
	assert.True(t, apierrors.IsAlreadyExists(err), "the API error stays visible: %v", err)
}

func TestCreateMirrorPodOtherErrors(t *testing.T) {
	cs := fake.NewClientset()
	cs.PrependReactor("create", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(podsResource, "etcd-node-a", errors.New("no"))
	})
	err := NewBasicMirrorClient(kubeclienttest.Wrap(cs), "node-a", nodeGetter(liveNode(), nil)).CreateMirrorPod(context.Background(), staticWithMeta())
	assert.True(t, apierrors.IsForbidden(err))
	assert.NotErrorIs(t, err, ErrMirrorExists)
}

// TestDeleteMirrorPodRequest pins the delete: grace period 0, UID precondition.
func TestDeleteMirrorPodRequest(t *testing.T) {
	m := mirrorFor("h1")
	cs := fake.NewClientset(m)
	c := NewBasicMirrorClient(kubeclienttest.Wrap(cs), "node-a", nil)
	uid := m.UID
	deleted, err := c.DeleteMirrorPod(context.Background(), podutil.FullName(m), &uid)
	require.NoError(t, err)
	assert.True(t, deleted)

	actions := cs.Actions()
	require.Len(t, actions, 1)
	del := actions[0].(k8stesting.DeleteAction)
	assert.Equal(t, "kube-system", del.GetNamespace())
	assert.Equal(t, "etcd-node-a", del.GetName())
	assert.Equal(t, metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To[int64](0),
		Preconditions:      &metav1.Preconditions{UID: ptr.To(m.UID)},
	}, del.GetDeleteOptions())
	uid = "changed-by-caller-later"
	assert.Equal(t, m.UID, *del.GetDeleteOptions().Preconditions.UID, "the precondition is a copy")
}

func TestDeleteMirrorPodWithoutUID(t *testing.T) {
	m := mirrorFor("h1")
	cs := fake.NewClientset(m)
	deleted, err := NewBasicMirrorClient(kubeclienttest.Wrap(cs), "node-a", nil).DeleteMirrorPod(context.Background(), podutil.FullName(m), nil)
	require.NoError(t, err)
	assert.True(t, deleted)
	opts := cs.Actions()[0].(k8stesting.DeleteAction).GetDeleteOptions()
	assert.Nil(t, opts.Preconditions)
	assert.Equal(t, ptr.To[int64](0), opts.GracePeriodSeconds)
}

func TestDeleteMirrorPodOutcomes(t *testing.T) {
	uid := types.UID("mirror-uid")
	for _, tc := range []struct {
		name        string
		apiErr      error
		wantDeleted bool
		wantErr     bool
	}{
		{"deleted", nil, true, false},
		{"already gone", apierrors.NewNotFound(podsResource, "etcd-node-a"), false, false},
		{"UID precondition failed", apierrors.NewConflict(podsResource, "etcd-node-a",
			errors.New("Precondition failed: UID in precondition: mirror-uid, UID in object meta: other")), false, false},
		{"forbidden: caller retries", apierrors.NewForbidden(podsResource, "etcd-node-a", errors.New("no")), false, true},
		{"server error: caller retries", apierrors.NewInternalError(errors.New("etcd down")), false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := fake.NewClientset()
			cs.PrependReactor("delete", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
				return true, nil, tc.apiErr
			})
			deleted, err := NewBasicMirrorClient(kubeclienttest.Wrap(cs), "node-a", nil).DeleteMirrorPod(context.Background(), "etcd-node-a_kube-system", &uid)
			assert.Equal(t, tc.wantDeleted, deleted)
			if tc.wantErr {
				require.Error(t, err)
				assert.ErrorIs(t, err, tc.apiErr, "the API error is wrapped")
			} else {
				assert.NoError(t, err)
			}
		})
	}
}

func TestDeleteMirrorPodBadFullName(t *testing.T) {
	cs := fake.NewClientset()
	deleted, err := NewBasicMirrorClient(kubeclienttest.Wrap(cs), "node-a", nil).DeleteMirrorPod(context.Background(), "no-namespace", nil)
	assert.False(t, deleted)
	assert.Error(t, err)
	assert.Empty(t, cs.Actions())
}
