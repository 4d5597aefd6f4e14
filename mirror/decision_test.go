package mirror

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

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
