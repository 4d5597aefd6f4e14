package podutil

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
