package agent_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/agent"
	"github.com/vk-static/vk-static/kubeclient/kubeclienttest"
	"github.com/vk-static/vk-static/provider/mock"
)

// BenchmarkHeapPerAPIPod measures the agent's live heap per API pod (issue 28 item 3): the whole
// agent in this process, as cmd/vk-static runs it for the bench's api-1k (the mock provider, the
// node's own identity, a real API server), holding n Running pods — the API source's informer
// cache, the merger, the pod manager, the pod controller's state and the provider's. It reports
// the in-use heap after a GC with n+1 pods minus the same with one (so that what the first pod
// starts lazily is on both sides), over n ("B/pod"), and that difference ("heap-B"). It asserts nothing about speed, and runs once whatever b.N:
//
//	go test -run '^$' -bench HeapPerAPIPod -benchtime 1x ./agent/
func BenchmarkHeapPerAPIPod(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			perPod, total := heapPerAPIPod(b, n)
			b.ReportMetric(perPod, "B/pod")
			b.ReportMetric(total, "heap-B")
		})
	}
}

func heapPerAPIPod(b *testing.B, n int) (perPod, total float64) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	name := fmt.Sprintf("heap-%d", n)
	client := env.NodeClient(b, name)
	ns := env.Namespace(b)
	p, err := mock.New(mock.Config{NodeName: name, InternalIP: "127.0.0.1", Pods: *resource.NewQuantity(int64(n+110), resource.DecimalSI)})
	if err != nil {
		b.Fatal(err)
	}
	a, err := agent.New(agent.Config{NodeName: name, NewProvider: built(p), Client: kubeclienttest.Wrap(client), Node: agent.NewNode(name, "127.0.0.1", nil)})
	if err != nil {
		b.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	go func() { _ = a.Run(runCtx) }()
	defer func() {
		stop()
		<-a.Done()
		// Gone at once: no agent is left to see them terminate.
		_ = env.Admin.CoreV1().Pods(ns).DeleteCollection(context.Background(), metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}, metav1.ListOptions{})
		_ = env.Admin.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{})
	}()
	select {
	case <-a.Ready():
	case <-a.Done():
		b.Fatalf("agent stopped: %v", a.Err())
	}
	createPods(b, ns, name, 0, 1)
	waitRunning(b, ns, 1)
	before := liveHeap()

	b.ResetTimer()
	createPods(b, ns, name, 1, n+1)
	waitRunning(b, ns, n+1)
	b.StopTimer()
	after := settledHeap()
	writeHeapProfile(b, n)
	total = float64(after) - float64(before)
	return total / float64(n), total
}

// createPods creates the bench's pods (bench.benchPod: one container, no token) p-from to
// p-(to-1) bound to node, from a few clients at once.
func createPods(b *testing.B, ns, node string, from, to int) {
	var wg sync.WaitGroup
	next := make(chan int)
	errs := make(chan error, 1)
	for range 16 {
		wg.Go(func() {
			for i := range next {
				pod := &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p-%d", i), Labels: map[string]string{"app": "vkbench"}},
					Spec: corev1.PodSpec{
						NodeName:                     node,
						AutomountServiceAccountToken: ptr.To(false),
						Containers:                   []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}},
					},
				}
				if _, err := env.Admin.CoreV1().Pods(ns).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		})
	}
	for i := from; i < to; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
}

// waitRunning waits until the API server has all n pods of ns Running, as the agent wrote them.
func waitRunning(b *testing.B, ns string, n int) {
	deadline := time.Now().Add(time.Duration(n/50+60) * time.Second)
	for {
		running := 0
		list, err := env.Admin.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{ResourceVersion: "0"})
		if err == nil {
			for i := range list.Items {
				if list.Items[i].Status.Phase == corev1.PodRunning {
					running++
				}
			}
		}
		if running == n {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d pods Running (%v)", running, n, err)
		}
		time.Sleep(time.Second)
	}
}

// settledHeap is liveHeap once the agent has finished what the pods' start left it (events,
// status writes, queues): two readings a few seconds apart within 1 %, or the last after 30 s.
func settledHeap() uint64 {
	last := liveHeap()
	for range 10 {
		time.Sleep(3 * time.Second)
		now := liveHeap()
		if max(now, last)-min(now, last) < last/100 {
			return now
		}
		last = now
	}
	return last
}

// writeHeapProfile writes the in-use heap profile, with n pods Running, to
// $VK_STATIC_HEAP_PROFILE-<n>.pprof when that variable is set: what each pod's bytes are, with
// -memprofilerate 4096 for a finer one than the default rate's.
func writeHeapProfile(b *testing.B, n int) {
	prefix := os.Getenv("VK_STATIC_HEAP_PROFILE")
	if prefix == "" {
		return
	}
	f, err := os.Create(fmt.Sprintf("%s-%d.pprof", prefix, n))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		b.Fatal(err)
	}
}

// liveHeap is the heap in use once a collection has freed what nothing holds; two in a row, so
// that what finalizers let go is freed too.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}
