package integration

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2/ktesting"

	"github.com/vk-static/vk-static/kubeclient/kubeclienttest"
	"github.com/vk-static/vk-static/podutil"
	"github.com/vk-static/vk-static/sources"
	"github.com/vk-static/vk-static/test/support/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, &env)) }

func newPod(ns, name, node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PodSpec{
			NodeName:                     node,
			AutomountServiceAccountToken: new(bool),
			Containers:                   []corev1.Container{{Name: "c", Image: "busybox:1.36"}},
		},
	}
}

// TestAPISourceAsNode runs the API source with the identity system:node:<node> under the Node
// authorizer: it sees exactly the pods bound to node-a, mirror pods included, and every kind of
// change arrives as the right update.
func TestAPISourceAsNode(t *testing.T) {
	// The test's own clientsets keep HTTP/2 connections open in client-go's shared transport;
	// those are not the source's goroutines.
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent(), goleak.IgnoreAnyFunction("golang.org/x/net/http2.(*ClientConn).readLoop"))
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	ns := env.Namespace(t)
	// A node of its own per run, so that pods left by an earlier run (-count) are not its pods.
	nodeName := "node-a-" + ns
	admin := env.Admin

	mine, err := admin.CoreV1().Pods(ns).Create(ctx, newPod(ns, "mine", nodeName), metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = admin.CoreV1().Pods(ns).Create(ctx, newPod(ns, "elsewhere", "node-b-"+ns), metav1.CreateOptions{})
	require.NoError(t, err)

	out := make(chan sources.Snapshot)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		sources.NewAPISource(kubeclienttest.Wrap(env.NodeClient(t, nodeName)), nodeName).Run(ctx, out)
	}()
	defer func() {
		cancel()
		wg.Wait()
	}()

	merger := sources.NewMerger()
	var lastPartial bool // whether the snapshot that caused the last expected updates was partial
	// expect merges snapshots until one causes updates, and checks them (with no want, returns
	// them unchecked).
	expect := func(want ...string) []sources.PodUpdate {
		t.Helper()
		deadline := time.After(30 * time.Second)
		for {
			select {
			case s := <-out:
				require.Equal(t, podutil.APIServerSource, s.Source)
				for _, p := range s.Pods {
					assert.Empty(t, p.ManagedFields, "managedFields are dropped as pods enter the store")
				}
				lastPartial = s.Partial
				updates, problems := merger.MergeAndReport(s)
				assert.Empty(t, problems)
				if len(updates) == 0 {
					continue // e.g. a resourceVersion-only change
				}
				var got []string
				for _, u := range updates {
					line := u.Op.String()
					for _, p := range u.Pods {
						line += " " + p.Name
					}
					got = append(got, line)
				}
				if want != nil {
					require.Equal(t, want, got)
				}
				return updates
			case <-deadline:
				t.Fatalf("no updates; want %q", want)
			}
		}
	}

	first := expect("ADD mine")
	assert.Equal(t, podutil.APIServerSource, first[0].Pods[0].Annotations[podutil.ConfigSourceAnnotationKey])
	assert.True(t, merger.Seen(podutil.APIServerSource))
	assert.False(t, lastPartial, "the listed pods are a full snapshot")

	mine.Labels = map[string]string{"changed": "yes"}
	mine, err = admin.CoreV1().Pods(ns).Update(ctx, mine, metav1.UpdateOptions{})
	require.NoError(t, err)
	expect("UPDATE mine")
	assert.True(t, lastPartial, "a change after the list is a partial snapshot")

	mine.Status.Phase = corev1.PodRunning
	mine.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	_, err = admin.CoreV1().Pods(ns).UpdateStatus(ctx, mine, metav1.UpdateOptions{})
	require.NoError(t, err)
	expect("RECONCILE mine")

	// A mirror pod created by the node itself (owner: its Node) arrives like any other pod.
	node, err := admin.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName}}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = admin.CoreV1().Nodes().Delete(context.Background(), nodeName, metav1.DeleteOptions{}) })
	mirror := newPod(ns, "static-"+nodeName, nodeName)
	mirror.Spec.AutomountServiceAccountToken = nil
	mirror.Annotations = map[string]string{
		podutil.ConfigMirrorAnnotationKey: "hash-1", podutil.ConfigHashAnnotationKey: "hash-1", podutil.ConfigSourceAnnotationKey: podutil.FileSource,
	}
	controller := true
	mirror.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: nodeName, UID: node.UID, Controller: &controller}}
	_, err = env.NodeClient(t, nodeName).CoreV1().Pods(ns).Create(ctx, mirror, metav1.CreateOptions{})
	require.NoError(t, err)
	added := expect("ADD static-" + nodeName)
	assert.True(t, podutil.IsMirrorPod(added[0].Pods[0]))

	// Graceful deletion, then gone.
	require.NoError(t, admin.CoreV1().Pods(ns).Delete(ctx, "mine", metav1.DeleteOptions{GracePeriodSeconds: new(int64(30))}))
	expect("DELETE mine")
	// Shortening the grace period to 0 first updates the pod (a new DELETE, if the informer sees
	// that state) and then removes it.
	require.NoError(t, admin.CoreV1().Pods(ns).Delete(ctx, "mine", metav1.DeleteOptions{GracePeriodSeconds: new(int64(0))}))
	if updates := expect(); updates[0].Op == sources.DELETE {
		assert.Zero(t, *updates[0].Pods[0].DeletionGracePeriodSeconds)
		expect("REMOVE mine")
	} else {
		require.Equal(t, sources.REMOVE, updates[0].Op)
	}
}
