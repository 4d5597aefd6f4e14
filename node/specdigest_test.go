package node

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vk-static/vk-static/podutil"
)

func TestDigestSpec(t *testing.T) {
	base := func() *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"app": "web", "tier": "front"}},
			Spec: corev1.PodSpec{
				NodeSelector: map[string]string{"a": "1", "b": "2", "c": "3"},
				Containers: []corev1.Container{{Name: "main", Image: "nginx:1", Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
				}}},
			},
		}
	}
	for _, tc := range []struct {
		name string
		edit func(*corev1.Pod)
		same bool
	}{
		{name: "a copy", edit: func(*corev1.Pod) {}, same: true},
		{name: "status, resourceVersion and the agent's own annotations", same: true, edit: func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodRunning
			p.ResourceVersion = "7"
			p.Annotations = map[string]string{
				podutil.ConfigSourceAnnotationKey:    podutil.APIServerSource,
				podutil.ConfigFirstSeenAnnotationKey: "2026-11-25T10:00:00Z",
			}
		}},
		// The downward API shows annotations: the e2e "Downward API volume should update
		// annotations on modification" needs an UpdatePod for them.
		{name: "an annotation added", edit: func(p *corev1.Pod) { p.Annotations = map[string]string{"builder": "foo"} }},
		{name: "a label become an annotation", edit: func(p *corev1.Pod) {
			delete(p.Labels, "tier")
			p.Annotations = map[string]string{"tier": "front"}
		}},
		{name: "a quantity in another form", same: true, edit: func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("1000m")
		}},
		{name: "empty instead of nil", same: true, edit: func(p *corev1.Pod) {
			p.Spec.Tolerations = []corev1.Toleration{}
			p.Spec.Containers[0].Env = []corev1.EnvVar{}
		}},
		{name: "image", edit: func(p *corev1.Pod) { p.Spec.Containers[0].Image = "nginx:2" }},
		// The ephemeralcontainers subresource (kubectl debug) changes only the spec's
		// ephemeralContainers: the provider must be told, to start them.
		{name: "an ephemeral container added", edit: func(p *corev1.Pod) {
			p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
				Name: "debugger", Image: "busybox"}, TargetContainerName: "main"}}
		}},
		{name: "a request", edit: func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("2")
		}},
		{name: "a label value", edit: func(p *corev1.Pod) { p.Labels["tier"] = "back" }},
		{name: "a label added", edit: func(p *corev1.Pod) { p.Labels["new"] = "" }},
		{name: "labels moved between key and value", edit: func(p *corev1.Pod) {
			p.Labels = map[string]string{"app": "webtier", "": "front"}
		}},
		{name: "activeDeadlineSeconds", edit: func(p *corev1.Pod) { d := int64(5); p.Spec.ActiveDeadlineSeconds = &d }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := digestSpec(base())
			for range 10 { // map iteration order differs between runs; the digest may not
				p := base()
				tc.edit(p)
				if got := digestSpec(p) == want; got != tc.same {
					t.Fatalf("same digest = %v, want %v", got, tc.same)
				}
			}
		})
	}
}
