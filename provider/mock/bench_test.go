package mock

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// BenchmarkLifecycle10k creates and deletes pods on a provider already running 10,000, the
// scale benchmarks' load: the cost per operation must not grow with the number of pods.
func BenchmarkLifecycle10k(b *testing.B) {
	p, err := New(Config{NodeName: "node-a", InternalIP: "10.0.0.1", Pods: resource.MustParse("10000")})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p.NotifyPods(ctx, func(*corev1.Pod) {})
	pod := func(i int) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: fmt.Sprintf("p-%d", i), UID: types.UID(fmt.Sprintf("uid-%d", i))},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "pause"}}},
		}
	}
	for i := range 10000 {
		if err := p.CreatePod(ctx, pod(i)); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := range b.N {
		q := pod(10000 + i)
		if err := p.CreatePod(ctx, q); err != nil {
			b.Fatal(err)
		}
		if _, err := p.GetPodStatus(ctx, q.Namespace, q.Name); err != nil {
			b.Fatal(err)
		}
		if err := p.DeletePod(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
}
