package podmanager

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestTranslationsInEveryOrder applies the four events of one static pod's life — its ADD and
// REMOVE, and its mirror's ADD and DELETE — in all 24 orders (a removal before its add is a
// no-op, as a late event would be) and checks the result against a model written
// independently of the implementation:
//
//   - a pod is present at the end when its ADD came after its REMOVE (or it was never removed);
//   - the mirror translates to the static pod when the mirror is present at the end and both
//     were present together at some moment after the mirror's ADD;
//   - the mirror is an orphan when it is present and the static pod is not.
//
// The orders in which the static pod's ADD follows its mirror's are what a manifest removed and
// written again looks like to the manager (the kubelet e2e "should successfully recreate when
// file is removed and recreated"): the same UID and hash pair with the mirror already there.
func TestTranslationsInEveryOrder(t *testing.T) {
	static := staticPod("etcd", "s")
	mirrorPod := mirrorOf(static, "m")
	events := map[string]func(Manager){
		"addS": func(pm Manager) { pm.AddPod(static) },
		"delS": func(pm Manager) { pm.DeletePod(static) },
		"addM": func(pm Manager) { pm.AddPod(mirrorPod) },
		"delM": func(pm Manager) { pm.DeletePod(mirrorPod) },
	}
	for _, order := range permutations([]string{"addS", "delS", "addM", "delM"}) {
		t.Run(strings.Join(order, ","), func(t *testing.T) {
			pm := NewBasicPodManager()
			for _, ev := range order {
				events[ev](pm)
			}

			at := func(ev string) int {
				for i, e := range order {
					if e == ev {
						return i
					}
				}
				panic(ev)
			}
			// Live intervals [add, remove); a remove before the add never ends it.
			sFrom, sTo := at("addS"), at("delS")
			mFrom, mTo := at("addM"), at("delM")
			if sTo < sFrom {
				sTo = len(order)
			}
			if mTo < mFrom {
				mTo = len(order)
			}
			staticPresent := sTo == len(order)
			mirrorPresent := mTo == len(order)
			overlapped := max(sFrom, mFrom) < min(sTo, mTo)
			translated := mirrorPresent && overlapped

			_, ok := pm.GetPodByUID("s")
			assert.Equal(t, staticPresent, ok, "static present")
			_, ok = pm.GetMirrorPodByPod(static)
			assert.Equal(t, mirrorPresent, ok, "mirror present")

			wantUID := ResolvedPodUID("m")
			wantPodToMirror := map[ResolvedPodUID]MirrorPodUID{}
			wantMirrorToPod := map[MirrorPodUID]ResolvedPodUID{}
			if staticPresent {
				wantPodToMirror["s"] = ""
			}
			if translated {
				wantUID = "s"
				wantPodToMirror["s"] = "m"
				wantMirrorToPod["m"] = "s"
			}
			assert.Equal(t, wantUID, pm.TranslatePodUID("m"), "TranslatePodUID(mirror)")
			podToMirror, mirrorToPod := pm.GetUIDTranslations()
			assert.Equal(t, wantPodToMirror, podToMirror, "podToMirror")
			assert.Equal(t, wantMirrorToPod, mirrorToPod, "mirrorToPod")

			var wantOrphans []string
			if mirrorPresent && !staticPresent {
				wantOrphans = []string{"etcd-node-a_default"}
			}
			assert.Equal(t, wantOrphans, pm.GetOrphanedMirrorPodNames(), "orphans")
			assert.Len(t, pm.GetPods(), boolToInt(staticPresent))
		})
	}
}

func permutations(items []string) [][]string {
	if len(items) <= 1 {
		return [][]string{append([]string(nil), items...)}
	}
	var out [][]string
	for i := range items {
		rest := append(append([]string(nil), items[:i]...), items[i+1:]...)
		for _, p := range permutations(rest) {
			out = append(out, append([]string{items[i]}, p...))
		}
	}
	return out
}

func boolToInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestPermutationsHelper(t *testing.T) {
	got := permutations([]string{"a", "b", "c"})
	seen := map[string]bool{}
	for _, p := range got {
		seen[fmt.Sprint(p)] = true
	}
	assert.Len(t, got, 6)
	assert.Len(t, seen, 6)
}
