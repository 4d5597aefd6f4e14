package podmanager

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vk-static/vk-static/podutil"
)

// TestConcurrentReadersAndWriters runs writers that churn their own static pods and mirrors
// against readers calling every read method, under -race. Readers check invariants that hold
// at every instant; the final state is checked exactly.
func TestConcurrentReadersAndWriters(t *testing.T) {
	defer goleak.VerifyNone(t)
	const writers, readers, rounds = 4, 4, 100
	pm := NewBasicPodManager()

	var writing sync.WaitGroup
	for w := range writers {
		writing.Add(1)
		go func() {
			defer writing.Done()
			for r := range rounds {
				// Each round is an edit: a new static UID and a new mirror under one full name.
				static := staticPod(fmt.Sprintf("w%d", w), types.UID(fmt.Sprintf("w%d-s%d", w, r)))
				mirrorPod := mirrorOf(static, types.UID(fmt.Sprintf("w%d-m%d", w, r)))
				if r > 0 {
					prev := staticPod(fmt.Sprintf("w%d", w), types.UID(fmt.Sprintf("w%d-s%d", w, r-1)))
					pm.DeletePod(prev)
					pm.DeletePod(mirrorOf(prev, types.UID(fmt.Sprintf("w%d-m%d", w, r-1))))
				}
				pm.AddPod(static)
				pm.AddPod(mirrorPod)
				pm.UpdatePod(mirrorPod.DeepCopy())
				pm.AddPod(apiPod(fmt.Sprintf("api-w%d-%d", w, r), types.UID(fmt.Sprintf("w%d-a%d", w, r))))
			}
		}()
	}

	done := make(chan struct{})
	var reading sync.WaitGroup
	violations := make(chan string, readers)
	for range readers {
		reading.Add(1)
		go func() {
			defer reading.Done()
			report := func(format string, args ...any) {
				select {
				case violations <- fmt.Sprintf(format, args...):
				default:
				}
			}
			for {
				select {
				case <-done:
					return
				default:
				}
				pods, mirrors := pm.GetPodsAndMirrorPods()
				for _, p := range pods {
					if podutil.IsMirrorPod(p) {
						report("mirror %s among regular pods", p.UID)
					}
					if got, ok := pm.GetPodByUID(p.UID); ok && got.UID != p.UID {
						report("GetPodByUID(%s) returned %s", p.UID, got.UID)
					}
				}
				for _, m := range mirrors {
					if got, ok := pm.GetPodByMirrorPod(m); ok && podutil.FullName(got) != podutil.FullName(m) {
						report("GetPodByMirrorPod(%s) returned another name", m.Name)
					}
					if s := pm.TranslatePodUID(m.UID); s != ResolvedPodUID(m.UID) && s != ResolvedPodUID(podutil.MirrorHash(m)) {
						report("mirror %s translated to %s, not its own static pod", m.UID, s)
					}
				}
				podToMirror, mirrorToPod := pm.GetUIDTranslations()
				for m, s := range mirrorToPod {
					if podToMirror[s] == "" {
						report("mirrorToPod %s→%s without podToMirror entry", m, s)
					}
				}
				_ = pm.GetOrphanedMirrorPodNames()
				_ = pm.GetPods()
			}
		}()
	}

	writing.Wait()
	close(done)
	reading.Wait()
	close(violations)
	for v := range violations {
		t.Error(v)
	}

	pods, mirrors := pm.GetPodsAndMirrorPods()
	assert.Len(t, pods, writers+writers*rounds, "each writer's last static pod and all its API pods")
	assert.Len(t, mirrors, writers)
	assert.Empty(t, pm.GetOrphanedMirrorPodNames())
	for w := range writers {
		last := ResolvedPodUID(fmt.Sprintf("w%d-s%d", w, rounds-1))
		assert.Equal(t, last, pm.TranslatePodUID(types.UID(fmt.Sprintf("w%d-m%d", w, rounds-1))))
	}
	_, mirrorToPod := pm.GetUIDTranslations()
	assert.Len(t, mirrorToPod, writers, "no translation outlives its mirror")
}
