package node_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/node"
	"github.com/vk-static/vk-static/podutil"
	"github.com/vk-static/vk-static/provider/mock"
	"github.com/vk-static/vk-static/sources"
)

// scribbler is a provider that, as the provider contract lets it, writes into every part of
// the pods it is given, after passing a copy on to the mock.
type scribbler struct{ *mock.Provider }

func scribble(pod *corev1.Pod) {
	pod.Labels["scribbled"] = "1"
	pod.Annotations["scribbled"] = "1"
	pod.Spec.Containers[0].Image = "scribbled"
	pod.Spec.Tolerations[0].Key = "scribbled"
	pod.Spec.SecurityContext.RunAsUser = ptr.To[int64](7)
	*pod.Spec.TerminationGracePeriodSeconds = 99
	pod.Status.Conditions[0].Status = "scribbled"
	pod.Status.HostIPs[0].IP = "scribbled"
	*pod.Status.StartTime = metav1.Time{}
}

func (s scribbler) CreatePod(ctx context.Context, pod *corev1.Pod) error {
	defer scribble(pod)
	return s.Provider.CreatePod(ctx, pod.DeepCopy())
}

func (s scribbler) UpdatePod(ctx context.Context, pod *corev1.Pod) error {
	defer scribble(pod)
	return s.Provider.UpdatePod(ctx, pod.DeepCopy())
}

func (s scribbler) DeletePod(ctx context.Context, pod *corev1.Pod) error {
	defer scribble(pod)
	return s.Provider.DeletePod(ctx, pod.DeepCopy())
}

// The API source's pods share equal parts with each other (sources' trimAPIPod: labels,
// containers, conditions, ...), so the pods the controller hands to CreatePod, UpdatePod and
// DeletePod, which the provider may modify, are deep copies: what a provider writes into one
// pod's never shows in another's.
func TestProviderWritesDoNotReachSharedParts(t *testing.T) {
	h := startController(t, nil, func(cfg *node.PodControllerConfig) {
		cfg.Provider = scribbler{cfg.Provider.(*mock.Provider)}
	})
	started := metav1.NewTime(time.Now().Truncate(time.Second))
	labels := map[string]string{"app": "web"}
	annotations := map[string]string{podutil.ConfigSourceAnnotationKey: podutil.APIServerSource, "team": "a"}
	containers := []corev1.Container{{Name: "c", Image: "img:1"}}
	tolerations := []corev1.Toleration{{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists}}
	security := &corev1.PodSecurityContext{}
	grace := ptr.To[int64](0)
	conditions := []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: started}}
	hostIPs := []corev1.HostIP{{IP: "127.0.0.1"}}
	pod := func(name string) *corev1.Pod { // every part shared, as trimAPIPod shares them
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name), ResourceVersion: "1",
				Labels: labels, Annotations: annotations},
			Spec: corev1.PodSpec{NodeName: "n1", Containers: containers, Tolerations: tolerations,
				SecurityContext: security, TerminationGracePeriodSeconds: grace},
			Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: conditions, HostIPs: hostIPs, StartTime: &started},
		}
	}
	a, b := pod("a"), pod("b")
	want := b.DeepCopy()

	h.send(sources.PodUpdate{Op: sources.ADD, Source: podutil.APIServerSource, Pods: []*corev1.Pod{a, b}, SourceSeen: true})
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, 1, h.calls(a).Create, "a: CreatePod calls")
		assert.Equal(c, 1, h.calls(b).Create, "b: CreatePod calls")
	}, 10*time.Second, 5*time.Millisecond, "created")

	updated := *a // a new version: its own spec struct, the parts still shared
	updated.ResourceVersion = "2"
	updated.Spec.ActiveDeadlineSeconds = ptr.To[int64](100)
	h.send(sources.PodUpdate{Op: sources.UPDATE, Source: podutil.APIServerSource, Pods: []*corev1.Pod{&updated}})
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, 1, h.calls(a).Update, "a: UpdatePod calls")
	}, 10*time.Second, 5*time.Millisecond, "updated")

	deleting := updated
	deleting.ResourceVersion = "3"
	deleting.DeletionTimestamp, deleting.DeletionGracePeriodSeconds = &started, ptr.To[int64](0)
	h.send(sources.PodUpdate{Op: sources.DELETE, Source: podutil.APIServerSource, Pods: []*corev1.Pod{&deleting}})
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.GreaterOrEqual(c, h.calls(a).Delete, 1, "a: DeletePod calls")
	}, 10*time.Second, 5*time.Millisecond, "deleted")

	assert.Equal(t, want, b, "b, sharing every part with a")
}
