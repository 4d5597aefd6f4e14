package podutil

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestIdentity(t *testing.T) {
	pod := func(ann map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", Annotations: ann}}
	}
	for _, tc := range []struct {
		name           string
		pod            *corev1.Pod
		static, mirror bool
	}{
		{"api pod", pod(map[string]string{ConfigSourceAnnotationKey: APIServerSource}), false, false},
		{"no annotations", pod(nil), false, false},
		{"file pod", pod(map[string]string{ConfigSourceAnnotationKey: FileSource, ConfigHashAnnotationKey: "h"}), true, false},
		{"http pod", pod(map[string]string{ConfigSourceAnnotationKey: HTTPSource}), true, false},
		{"mirror", pod(map[string]string{ConfigSourceAnnotationKey: FileSource, ConfigMirrorAnnotationKey: "h"}), true, true},
		{"mirror with empty hash", pod(map[string]string{ConfigMirrorAnnotationKey: ""}), false, true},
	} {
		if got := IsStaticPod(tc.pod); got != tc.static {
			t.Errorf("%s: IsStaticPod = %v, want %v", tc.name, got, tc.static)
		}
		if got := IsMirrorPod(tc.pod); got != tc.mirror {
			t.Errorf("%s: IsMirrorPod = %v, want %v", tc.name, got, tc.mirror)
		}
	}
	if got := FullName(pod(nil)); got != "web_default" {
		t.Errorf("FullName = %q", got)
	}
}

func TestParseFullName(t *testing.T) {
	for _, tc := range []struct {
		in              string
		name, namespace string
		ok              bool
	}{
		{"web_default", "web", "default", true},
		{BuildFullName("etcd-node-a", "kube-system"), "etcd-node-a", "kube-system", true},
		{"web", "", "", false},
		{"_default", "", "", false},
		{"web_", "", "", false},
		{"a_b_c", "", "", false},
		{"", "", "", false},
	} {
		name, ns, err := ParseFullName(tc.in)
		if (err == nil) != tc.ok || name != tc.name || ns != tc.namespace {
			t.Errorf("ParseFullName(%q) = %q, %q, %v; want %q, %q, ok=%v", tc.in, name, ns, err, tc.name, tc.namespace, tc.ok)
		}
	}
}

func TestIsSidecar(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    *corev1.Container
		want bool
	}{
		{"nil", nil, false},
		{"no restart policy", &corev1.Container{}, false},
		{"restartPolicy Always", &corev1.Container{RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)}, true},
		{"restartPolicy OnFailure", &corev1.Container{RestartPolicy: ptr.To(corev1.ContainerRestartPolicyOnFailure)}, false},
	} {
		if got := IsSidecar(tc.c); got != tc.want {
			t.Errorf("%s: IsSidecar = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestGracePeriod(t *testing.T) {
	for _, tc := range []struct {
		name string
		pod  corev1.Pod
		want time.Duration
	}{
		{"API default", corev1.Pod{}, 30 * time.Second},
		{"the pod's own", corev1.Pod{Spec: corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](5)}}, 5 * time.Second},
		{"the deletion's before the pod's", corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{DeletionGracePeriodSeconds: ptr.To[int64](0)},
			Spec:       corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](5)},
		}, 0},
	} {
		if got := GracePeriod(&tc.pod); got != tc.want {
			t.Errorf("%s: GracePeriod = %v, want %v", tc.name, got, tc.want)
		}
	}
}
