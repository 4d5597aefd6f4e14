package podmanager

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vk-static/vk-static/podutil"
)

// TestLookups exercises every read method on a manager holding one static pod, its mirror and
// one API pod.
func TestLookups(t *testing.T) {
	static := staticPod("etcd", "static-1")
	mirrorPod := mirrorOf(static, "mirror-1")
	api := apiPod("web", "api-1")
	pm := NewBasicPodManager()
	pm.AddPod(static)
	pm.AddPod(mirrorPod)
	pm.AddPod(api)

	assert.ElementsMatch(t, []types.UID{"static-1", "api-1"}, uids(pm.GetPods()), "GetPods: regular pods only")
	pods, mirrors := pm.GetPodsAndMirrorPods()
	assert.ElementsMatch(t, []types.UID{"static-1", "api-1"}, uids(pods))
	assert.ElementsMatch(t, []types.UID{"mirror-1"}, uids(mirrors))

	for _, tc := range []struct {
		name string
		get  func() (*corev1.Pod, bool)
		want *corev1.Pod // nil: not found
	}{
		{"by full name, static", func() (*corev1.Pod, bool) { return pm.GetPodByFullName("etcd-node-a_default") }, static},
		{"by full name, api", func() (*corev1.Pod, bool) { return pm.GetPodByFullName("web_default") }, api},
		{"by full name, unknown", func() (*corev1.Pod, bool) { return pm.GetPodByFullName("nope_default") }, nil},
		{"by name, static", func() (*corev1.Pod, bool) { return pm.GetPodByName("default", "etcd-node-a") }, static},
		{"by name, wrong namespace", func() (*corev1.Pod, bool) { return pm.GetPodByName("kube-system", "etcd-node-a") }, nil},
		{"by UID, static", func() (*corev1.Pod, bool) { return pm.GetPodByUID("static-1") }, static},
		{"by UID, api", func() (*corev1.Pod, bool) { return pm.GetPodByUID("api-1") }, api},
		{"by UID, a mirror UID is not a regular pod", func() (*corev1.Pod, bool) { return pm.GetPodByUID("mirror-1") }, nil},
		{"static by mirror", func() (*corev1.Pod, bool) { return pm.GetPodByMirrorPod(mirrorPod) }, static},
		{"mirror by static", func() (*corev1.Pod, bool) { return pm.GetMirrorPodByPod(static) }, mirrorPod},
		{"mirror of an API pod", func() (*corev1.Pod, bool) { return pm.GetMirrorPodByPod(api) }, nil},
	} {
		got, ok := tc.get()
		assert.Equal(t, tc.want != nil, ok, tc.name)
		assert.Same(t, tc.want, got, tc.name)
	}

	assert.True(t, pm.IsMirrorPodOf(mirrorPod, static))
	assert.False(t, pm.IsMirrorPodOf(static, mirrorPod), "arguments are (mirror, static)")
	assert.Equal(t, ResolvedPodUID("static-1"), pm.TranslatePodUID("mirror-1"))
	assert.Equal(t, ResolvedPodUID("static-1"), pm.TranslatePodUID("static-1"))
	assert.Equal(t, ResolvedPodUID("api-1"), pm.TranslatePodUID("api-1"))
	assert.Equal(t, ResolvedPodUID(""), pm.TranslatePodUID(""))
	podToMirror, mirrorToPod := pm.GetUIDTranslations()
	assert.Equal(t, map[ResolvedPodUID]MirrorPodUID{"static-1": "mirror-1"}, podToMirror, "API pods are not listed")
	assert.Equal(t, map[MirrorPodUID]ResolvedPodUID{"mirror-1": "static-1"}, mirrorToPod)
	assert.Empty(t, pm.GetOrphanedMirrorPodNames())
}

func TestIsMirrorPodOf(t *testing.T) {
	static := staticPod("etcd", "h1")
	pm := NewBasicPodManager()
	renamed := mirrorOf(static, "m")
	renamed.Name = "other"
	otherNS := mirrorOf(static, "m")
	otherNS.Namespace = "kube-system"
	noAnnotation := static.DeepCopy()
	noAnnotation.UID = "m"
	specChanged := mirrorOf(static, "m")
	specChanged.Spec.Containers = []corev1.Container{{Name: "defaulted-by-api-server"}}
	for _, tc := range []struct {
		name   string
		mirror *corev1.Pod
		static *corev1.Pod
		want   bool
	}{
		{"current", mirrorOf(static, "m"), static, true},
		{"spec differs: never compared", specChanged, static, true},
		{"hash differs (edited manifest)", mirrorOf(staticPod("etcd", "h0"), "m"), static, false},
		{"other name", renamed, static, false},
		{"other namespace", otherNS, static, false},
		{"not a mirror", noAnnotation, static, false},
	} {
		assert.Equal(t, tc.want, pm.IsMirrorPodOf(tc.mirror, tc.static), tc.name)
	}
}

func TestUpdatePodReplacesByUID(t *testing.T) {
	pm := NewBasicPodManager()
	v1 := apiPod("web", "u1")
	pm.AddPod(v1)
	v2 := v1.DeepCopy()
	v2.Labels = map[string]string{"v": "2"}
	pm.UpdatePod(v2)
	got, ok := pm.GetPodByUID("u1")
	require.True(t, ok)
	assert.Same(t, v2, got)
	got, _ = pm.GetPodByFullName("web_default")
	assert.Same(t, v2, got)
	assert.Len(t, pm.GetPods(), 1)

	// A UID that changes full name (not something the API allows, but an agent bug must not
	// leave a dangling name behind).
	renamed := v2.DeepCopy()
	renamed.Name = "web2"
	pm.UpdatePod(renamed)
	_, ok = pm.GetPodByFullName("web_default")
	assert.False(t, ok, "old full name must be released")
	got, _ = pm.GetPodByFullName("web2_default")
	assert.Same(t, renamed, got)
}

func TestDeletePod(t *testing.T) {
	static := staticPod("etcd", "s1")
	mirrorPod := mirrorOf(static, "m1")
	api := apiPod("web", "a1")
	pm := NewBasicPodManager()
	pm.SetPods([]*corev1.Pod{static, mirrorPod, api})

	// Deleting with an older copy of the object works: the UID identifies it.
	stale := api.DeepCopy()
	stale.Labels = map[string]string{"old": "copy"}
	pm.DeletePod(stale)
	_, ok := pm.GetPodByUID("a1")
	assert.False(t, ok)
	_, ok = pm.GetPodByFullName("web_default")
	assert.False(t, ok)

	// Deleting something unknown is a no-op.
	pm.DeletePod(apiPod("ghost", "g1"))
	assert.ElementsMatch(t, []types.UID{"s1"}, uids(pm.GetPods()))

	pm.DeletePod(mirrorPod)
	_, ok = pm.GetMirrorPodByPod(static)
	assert.False(t, ok)
	assert.Equal(t, ResolvedPodUID("m1"), pm.TranslatePodUID("m1"), "a deleted mirror translates to nothing")
	podToMirror, mirrorToPod := pm.GetUIDTranslations()
	assert.Equal(t, map[ResolvedPodUID]MirrorPodUID{"s1": ""}, podToMirror, "a static pod without a mirror maps to \"\"")
	assert.Empty(t, mirrorToPod)
}

// TestStaticPodEditedWhileOldMirrorExists is the edit transcript: the manifest changes, so the
// static pod gets a new UID under the same full name while the API server still has the mirror
// of the old one. Both orders of REMOVE(old) and ADD(new) must end in the same state. For the
// kubelet e2e "should be updated when static pod updated": the old mirror is still found by full
// name and IsMirrorPodOf is false, so the pod sync loop knows to recreate it.
func TestStaticPodEditedWhileOldMirrorExists(t *testing.T) {
	for _, order := range []string{"remove then add", "add then remove"} {
		t.Run(order, func(t *testing.T) {
			oldStatic := staticPod("etcd", "hash-a")
			newStatic := staticPod("etcd", "hash-b")
			oldMirror := mirrorOf(oldStatic, "mirror-a")
			pm := NewBasicPodManager()
			pm.AddPod(oldStatic)
			pm.AddPod(oldMirror)

			if order == "remove then add" {
				pm.DeletePod(oldStatic)
				pm.AddPod(newStatic)
			} else {
				pm.AddPod(newStatic)
				pm.DeletePod(oldStatic)
			}

			got, ok := pm.GetMirrorPodByPod(newStatic)
			require.True(t, ok, "the old mirror is found by full name")
			assert.Same(t, oldMirror, got)
			assert.False(t, pm.IsMirrorPodOf(got, newStatic), "hash differs: the caller must recreate")
			byMirror, ok := pm.GetPodByMirrorPod(oldMirror)
			require.True(t, ok)
			assert.Same(t, newStatic, byMirror)
			_, ok = pm.GetPodByUID("hash-a")
			assert.False(t, ok)
			assert.Empty(t, pm.GetOrphanedMirrorPodNames(), "a static pod holds the name: not an orphan")

			// The old mirror still stands for the old static pod, which the provider is still
			// terminating; the new one has no mirror yet.
			assert.Equal(t, ResolvedPodUID("hash-a"), pm.TranslatePodUID("mirror-a"))
			podToMirror, mirrorToPod := pm.GetUIDTranslations()
			assert.Equal(t, map[ResolvedPodUID]MirrorPodUID{"hash-a": "mirror-a", "hash-b": ""}, podToMirror)
			assert.Equal(t, map[MirrorPodUID]ResolvedPodUID{"mirror-a": "hash-a"}, mirrorToPod)

			// The caller recreates the mirror: delete, then the new one appears.
			pm.DeletePod(oldMirror)
			podToMirror, mirrorToPod = pm.GetUIDTranslations()
			assert.Equal(t, map[ResolvedPodUID]MirrorPodUID{"hash-b": ""}, podToMirror, "the old translation goes with its mirror")
			assert.Empty(t, mirrorToPod)
			newMirror := mirrorOf(newStatic, "mirror-b")
			pm.AddPod(newMirror)
			assert.True(t, pm.IsMirrorPodOf(newMirror, newStatic))
			assert.Equal(t, ResolvedPodUID("hash-b"), pm.TranslatePodUID("mirror-b"))
			podToMirror, mirrorToPod = pm.GetUIDTranslations()
			assert.Equal(t, map[ResolvedPodUID]MirrorPodUID{"hash-b": "mirror-b"}, podToMirror)
			assert.Equal(t, map[MirrorPodUID]ResolvedPodUID{"mirror-b": "hash-b"}, mirrorToPod)
		})
	}
}

// TestMirrorRecreatedOutOfOrder: the new mirror's ADD is seen before the old mirror's DELETE.
func TestMirrorRecreatedOutOfOrder(t *testing.T) {
	static := staticPod("etcd", "s")
	oldMirror := mirrorOf(static, "m-old")
	newMirror := mirrorOf(static, "m-new")
	pm := NewBasicPodManager()
	pm.AddPod(static)
	pm.AddPod(oldMirror)
	pm.AddPod(newMirror)
	got, _ := pm.GetMirrorPodByPod(static)
	assert.Same(t, newMirror, got, "the newest mirror answers")
	podToMirror, _ := pm.GetUIDTranslations()
	assert.Equal(t, MirrorPodUID("m-new"), podToMirror["s"])

	pm.DeletePod(oldMirror)
	got, ok := pm.GetMirrorPodByPod(static)
	require.True(t, ok, "deleting the old mirror must not drop the new one")
	assert.Same(t, newMirror, got)
	assert.Equal(t, ResolvedPodUID("s"), pm.TranslatePodUID("m-new"))
	assert.Equal(t, ResolvedPodUID("m-old"), pm.TranslatePodUID("m-old"))
}

// TestNameHeldByTwoPods: removing the newest holder of a full name hands it back to the older
// one rather than losing it.
func TestNameHeldByTwoPods(t *testing.T) {
	a := staticPod("etcd", "a")
	b := staticPod("etcd", "b")
	pm := NewBasicPodManager()
	pm.AddPod(a)
	pm.AddPod(b)
	got, _ := pm.GetPodByFullName(podutil.FullName(a))
	assert.Same(t, b, got)
	pm.DeletePod(b)
	got, ok := pm.GetPodByFullName(podutil.FullName(a))
	require.True(t, ok)
	assert.Same(t, a, got)
}

// TestGetOrphanedMirrorPodNames: a mirror whose static pod is gone is an orphan (the kubelet
// e2e, after each case: "delete the static pod, wait for the mirror pod to disappear"). A
// manifest removed and written again yields the same UID and hash, so the mirror pairs again
// and is no orphan: "should successfully recreate when file is removed and recreated"
// (conformance: Mirror Pod, recreate); the restart count that test checks is the provider's
// and the pod sync loop's.
func TestGetOrphanedMirrorPodNames(t *testing.T) {
	kept := staticPod("kept", "k")
	gone := staticPod("gone", "g")
	alsoGone := staticPod("also-gone", "ag")
	pm := NewBasicPodManager()
	pm.SetPods([]*corev1.Pod{
		kept, mirrorOf(kept, "mk"),
		gone, mirrorOf(gone, "mg"),
		mirrorOf(alsoGone, "mag"), // its static pod never showed up (e.g. removed while the agent was down)
		apiPod("web", "w"),
	})
	assert.Equal(t, []string{"also-gone-node-a_default"}, pm.GetOrphanedMirrorPodNames())
	pm.DeletePod(gone)
	assert.Equal(t, []string{"also-gone-node-a_default", "gone-node-a_default"}, pm.GetOrphanedMirrorPodNames(), "sorted")
	// The removed static pod keeps its translation while its mirror exists.
	assert.Equal(t, ResolvedPodUID("g"), pm.TranslatePodUID("mg"))
	pm.AddPod(gone) // the same manifest came back (e2e: file removed and recreated)
	assert.Equal(t, []string{"also-gone-node-a_default"}, pm.GetOrphanedMirrorPodNames())
	assert.Equal(t, ResolvedPodUID("g"), pm.TranslatePodUID("mg"))
}

func TestSetPodsReplacesEverything(t *testing.T) {
	s1 := staticPod("one", "s1")
	s2 := staticPod("two", "s2")
	pm := NewBasicPodManager()
	pm.SetPods([]*corev1.Pod{s1, mirrorOf(s1, "m1")})
	pm.DeletePod(s1) // translation m1 → s1 kept while m1 exists
	pm.SetPods([]*corev1.Pod{mirrorOf(s2, "m2"), s2})

	assert.ElementsMatch(t, []types.UID{"s2"}, uids(pm.GetPods()))
	_, mirrors := pm.GetPodsAndMirrorPods()
	assert.ElementsMatch(t, []types.UID{"m2"}, uids(mirrors))
	podToMirror, mirrorToPod := pm.GetUIDTranslations()
	assert.Equal(t, map[ResolvedPodUID]MirrorPodUID{"s2": "m2"}, podToMirror, "mirror listed before its static pod still pairs")
	assert.Equal(t, map[MirrorPodUID]ResolvedPodUID{"m2": "s2"}, mirrorToPod)
	assert.Equal(t, ResolvedPodUID("m1"), pm.TranslatePodUID("m1"))

	pm.SetPods(nil)
	pods, mirrors := pm.GetPodsAndMirrorPods()
	assert.Empty(t, pods)
	assert.Empty(t, mirrors)
	podToMirror, mirrorToPod = pm.GetUIDTranslations()
	assert.Empty(t, podToMirror)
	assert.Empty(t, mirrorToPod)
}

func TestReturnedCollectionsAreFresh(t *testing.T) {
	s := staticPod("etcd", "s")
	pm := NewBasicPodManager()
	pm.AddPod(s)
	pm.AddPod(mirrorOf(s, "m"))
	pods := pm.GetPods()
	pods[0] = nil
	assert.NotNil(t, pm.GetPods()[0])
	podToMirror, mirrorToPod := pm.GetUIDTranslations()
	delete(podToMirror, "s")
	delete(mirrorToPod, "m")
	podToMirror, mirrorToPod = pm.GetUIDTranslations()
	assert.Len(t, podToMirror, 1)
	assert.Len(t, mirrorToPod, 1)
}

// TestMirrorHashChangedInPlace: an admin edits a mirror's config.mirror annotation. The
// mirror no longer stands for the static pod, so it must not translate to it.
func TestMirrorHashChangedInPlace(t *testing.T) {
	s := staticPod("etcd", "s")
	m := mirrorOf(s, "m")
	pm := NewBasicPodManager()
	pm.AddPod(s)
	pm.AddPod(m)
	pm.DeletePod(s)
	edited := m.DeepCopy()
	edited.Annotations[podutil.ConfigMirrorAnnotationKey] = "tampered"
	pm.UpdatePod(edited)
	assert.Equal(t, ResolvedPodUID("m"), pm.TranslatePodUID("m"))
	// A status-only update of an unchanged mirror keeps the translation to the removed pod.
	pm.AddPod(s)
	pm.UpdatePod(m)
	pm.DeletePod(s)
	statusOnly := m.DeepCopy()
	statusOnly.Status.Phase = corev1.PodRunning
	pm.UpdatePod(statusOnly)
	assert.Equal(t, ResolvedPodUID("s"), pm.TranslatePodUID("m"))
}
