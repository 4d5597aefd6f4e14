package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// podWatcher follows every pod of one namespace through a watch and records, per pod object
// (UID), when the harness first saw it Running and when it saw it deleted. Times are the
// harness's receive times, which is what a user watching the cluster sees.
type podWatcher struct {
	mu      sync.Mutex
	pods    map[types.UID]*podTimes
	byName  map[string]types.UID // the newest object of each name
	running int
	deleted int
	changed chan struct{} // closed and replaced on every event
}

type podTimes struct {
	Name     string
	Created  metav1.Time // creationTimestamp (second precision)
	Running  time.Time   // first seen with phase Running
	ReadyLTT metav1.Time // lastTransitionTime of Ready=True (second precision)
	Deleted  time.Time
	Mirror   string // the kubernetes.io/config.mirror annotation, for static pods
}

func newPodWatcher() *podWatcher {
	return &podWatcher{pods: map[types.UID]*podTimes{}, byName: map[string]types.UID{}, changed: make(chan struct{})}
}

// run watches the namespace from its current resource version until ctx is cancelled,
// re-watching from the last seen version when the server closes the stream. started is
// closed once the first watch is established.
func (w *podWatcher) run(ctx context.Context, client kubernetes.Interface, ns string, started chan<- struct{}) error {
	list, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list pods: %w", err)
	}
	for i := range list.Items {
		w.observe(watch.Added, &list.Items[i], time.Now())
	}
	rv := list.ResourceVersion
	first := true
	for ctx.Err() == nil {
		wi, err := client.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("watch pods: %w", err)
		}
		if first {
			close(started)
			first = false
		}
		for ev := range wi.ResultChan() {
			now := time.Now()
			if ev.Type == watch.Error {
				wi.Stop()
				return fmt.Errorf("watch pods: %v", ev.Object)
			}
			pod, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			rv = pod.ResourceVersion
			if ev.Type != watch.Bookmark {
				w.observe(ev.Type, pod, now)
			}
		}
		wi.Stop()
	}
	return nil
}

func (w *podWatcher) observe(t watch.EventType, pod *corev1.Pod, now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	p, ok := w.pods[pod.UID]
	if !ok {
		p = &podTimes{Name: pod.Name, Created: pod.CreationTimestamp, Mirror: pod.Annotations["kubernetes.io/config.mirror"]}
		w.pods[pod.UID] = p
		w.byName[pod.Name] = pod.UID
	}
	if p.Running.IsZero() && pod.Status.Phase == corev1.PodRunning {
		p.Running = now
		w.running++
	}
	if p.ReadyLTT.IsZero() {
		for _, c := range pod.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				p.ReadyLTT = c.LastTransitionTime
			}
		}
	}
	if t == watch.Deleted && p.Deleted.IsZero() {
		p.Deleted = now
		w.deleted++
	}
	close(w.changed)
	w.changed = make(chan struct{})
}

// waitUntil blocks until cond (called under the lock) holds, ctx ends, or timeout passes.
func (w *podWatcher) waitUntil(ctx context.Context, timeout time.Duration, what string, cond func(*podWatcher) bool) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		w.mu.Lock()
		ok, changed := cond(w), w.changed
		w.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-changed:
		case <-deadline.C:
			return fmt.Errorf("%s: not within %s", what, timeout)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// errStalled: no pod changed state for the stall period, so waiting longer would not help.
var errStalled = errors.New("no progress")

// waitProgress is waitUntil that gives up early, with errStalled, when no pod was seen Running
// or deleted for stall: a pod the agent lost stays lost, and the scenario reports it instead
// of timing out.
func (w *podWatcher) waitProgress(ctx context.Context, stall, timeout time.Duration, what string, cond func(*podWatcher) bool) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		running, deleted := w.counts()
		err := w.waitUntil(ctx, stall, what, func(w *podWatcher) bool {
			return cond(w) || w.running != running || w.deleted != deleted
		})
		switch {
		case err != nil && ctx.Err() == nil:
			return fmt.Errorf("%s: %w for %s", what, errStalled, stall)
		case err != nil:
			return fmt.Errorf("%s: not within %s", what, timeout)
		}
		w.mu.Lock()
		done := cond(w)
		w.mu.Unlock()
		if done {
			return nil
		}
	}
}

func (w *podWatcher) counts() (running, deleted int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.running, w.deleted
}

// byPodName returns a copy of the newest object's times for a name.
func (w *podWatcher) byPodName(name string) (types.UID, podTimes, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	uid, ok := w.byName[name]
	if !ok {
		return "", podTimes{}, false
	}
	return uid, *w.pods[uid], true
}

// all returns a copy of every pod's times.
func (w *podWatcher) all() []podTimes {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]podTimes, 0, len(w.pods))
	for _, p := range w.pods {
		out = append(out, *p)
	}
	return out
}
