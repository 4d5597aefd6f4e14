package sources

import (
	"fmt"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/podutil"
)

// servedPod is pod i of the heap benchmark (agent.BenchmarkHeapPerAPIPod: one container, no
// token) as the API server serves it once the agent has it Running: the API server's defaults,
// and the status the agent wrote, its times in whole seconds as the API server keeps them.
func servedPod(i int, started time.Time) *corev1.Pod {
	at := metav1.NewTime(started.Truncate(time.Second))
	uid := fmt.Sprintf("0b6f5c3e-%04x-4f7a-9c1e-%012x", i%0x10000, i)
	conds := make([]corev1.PodCondition, 0, 5)
	for _, t := range []corev1.PodConditionType{corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.PodReady, corev1.ContainersReady, corev1.PodScheduled} {
		conds = append(conds, corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: at})
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("p-%d", i), Namespace: "heap-ns-5f7c2", UID: types.UID(uid),
			ResourceVersion: fmt.Sprint(1000 + 3*i), CreationTimestamp: at,
			Labels: map[string]string{"app": "vkbench"},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: "agent.test", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", FieldsType: "FieldsV1"},
			},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "c", Image: "registry.k8s.io/pause:3.10", TerminationMessagePath: "/dev/termination-log",
				TerminationMessagePolicy: corev1.TerminationMessageReadFile, ImagePullPolicy: corev1.PullIfNotPresent,
			}},
			RestartPolicy: corev1.RestartPolicyAlways, TerminationGracePeriodSeconds: ptr.To[int64](30),
			DNSPolicy: corev1.DNSClusterFirst, ServiceAccountName: "default", DeprecatedServiceAccount: "default",
			AutomountServiceAccountToken: ptr.To(false), NodeName: "heap-1000",
			SecurityContext: &corev1.PodSecurityContext{}, SchedulerName: corev1.DefaultSchedulerName,
			Tolerations: []corev1.Toleration{
				{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
				{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
			},
			Priority: ptr.To[int32](0), EnableServiceLinks: ptr.To(true),
			PreemptionPolicy: ptr.To(corev1.PreemptLowerPriority),
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, Conditions: conds,
			HostIP: "127.0.0.1", HostIPs: []corev1.HostIP{{IP: "127.0.0.1"}},
			PodIP: fmt.Sprintf("10.%d.%d.%d", i>>16&0xff, i>>8&0xff, i&0xff), StartTime: &at,
			PodIPs: []corev1.PodIP{{IP: fmt.Sprintf("10.%d.%d.%d", i>>16&0xff, i>>8&0xff, i&0xff)}},
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: "c", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at}},
				Ready: true, Image: "registry.k8s.io/pause:3.10", ImageID: "mock://registry.k8s.io/pause:3.10",
				ContainerID: "mock://" + uid + "/c", Started: ptr.To(true),
			}},
			QOSClass: corev1.PodQOSBestEffort,
		},
	}
}

// decodeServed decodes pod from its protobuf encoding, as the watch store's reflector gets it.
func decodeServed(t testing.TB, pod *corev1.Pod) *corev1.Pod {
	data, err := pod.Marshal()
	require.NoError(t, err)
	out := &corev1.Pod{}
	require.NoError(t, out.Unmarshal(data))
	return out
}

func sameBacking(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

// Two decoded pods share one copy of each low-cardinality string, and none of the values that
// are each pod's own; the values are unchanged.
func TestTrimAPIPodSharesLowCardinalityStrings(t *testing.T) {
	now := time.Now()
	a, b := decodeServed(t, servedPod(1, now)), decodeServed(t, servedPod(2, now))
	require.False(t, sameBacking(string(a.Status.Conditions[0].Type), string(b.Status.Conditions[0].Type)), "decoding allocates each string")
	wantA, wantB := a.DeepCopy(), b.DeepCopy()
	for _, p := range []*corev1.Pod{a, b} {
		_, err := trimAPIPod(p)
		require.NoError(t, err)
	}
	for _, p := range []*corev1.Pod{wantA, wantB} {
		_, err := trimAPIPod(p)
		require.NoError(t, err)
	}
	assert.Equal(t, wantA, a)
	assert.Equal(t, wantB, b)

	for what, pair := range map[string][2]string{
		"condition type":    {string(a.Status.Conditions[0].Type), string(b.Status.Conditions[0].Type)},
		"condition status":  {string(a.Status.Conditions[2].Status), string(b.Status.Conditions[2].Status)},
		"namespace":         {a.Namespace, b.Namespace},
		"label value":       {a.Labels["app"], b.Labels["app"]},
		"image":             {a.Spec.Containers[0].Image, b.Spec.Containers[0].Image},
		"image ID":          {a.Status.ContainerStatuses[0].ImageID, b.Status.ContainerStatuses[0].ImageID},
		"termination path":  {a.Spec.Containers[0].TerminationMessagePath, b.Spec.Containers[0].TerminationMessagePath},
		"scheduler":         {a.Spec.SchedulerName, b.Spec.SchedulerName},
		"toleration key":    {a.Spec.Tolerations[1].Key, b.Spec.Tolerations[1].Key},
		"preemption policy": {string(*a.Spec.PreemptionPolicy), string(*b.Spec.PreemptionPolicy)},
		"host IP":           {a.Status.HostIP, b.Status.HostIP},
		"phase":             {string(a.Status.Phase), string(b.Status.Phase)},
		"QOS class":         {string(a.Status.QOSClass), string(b.Status.QOSClass)},
	} {
		assert.Equal(t, pair[0], pair[1], what)
		assert.True(t, sameBacking(pair[0], pair[1]), "%s: one shared copy", what)
	}
	for what, pair := range map[string][2]string{
		"name":         {a.Name, b.Name},
		"UID":          {string(a.UID), string(b.UID)},
		"pod IP":       {a.Status.PodIP, b.Status.PodIP},
		"container ID": {a.Status.ContainerStatuses[0].ContainerID, b.Status.ContainerStatuses[0].ContainerID},
	} {
		assert.NotEqual(t, pair[0], pair[1], what)
	}
}

// The table never holds more than its bound, however many distinct strings it is given, and
// keeps handing out one copy of a string it holds.
func TestInternTableIsBounded(t *testing.T) {
	tab := newInternTable(8, 16)
	first := tab.intern(string([]byte("Running")))
	assert.True(t, sameBacking(first, tab.intern(string([]byte("Running")))))
	for i := range 1000 {
		tab.intern(fmt.Sprintf("flood-%d", i))
		require.LessOrEqual(t, len(tab.m), 8)
	}
	long := string(make([]byte, 17))
	tab.intern(long)
	_, held := tab.m[long]
	assert.False(t, held, "strings longer than the bound are not interned")
	again := tab.intern(string([]byte("Running")))
	assert.Equal(t, "Running", again)
	assert.True(t, sameBacking(again, tab.intern(string([]byte("Running")))), "interned again after the table started over")
	assert.Empty(t, tab.intern(""))
}

// BenchmarkAPIPodLiveHeap reports the live heap per pod of the heap benchmark's pods as the
// watch store holds them (decoded from protobuf, trimmed), 1000 at a time, started over 10 s as
// at api-1k: "live-B/pod" is the objects' bytes, "inuse-B/pod" with the spans they occupy.
func BenchmarkAPIPodLiveHeap(b *testing.B) {
	const n = 1000
	start := time.Now()
	encoded := make([][]byte, n)
	for i := range encoded {
		var err error
		encoded[i], err = servedPod(i, start.Add(time.Duration(i)*10*time.Millisecond)).Marshal()
		require.NoError(b, err)
	}
	var live, inuse float64
	for b.Loop() {
		pods := make([]*corev1.Pod, n)
		before := memStats()
		for i := range pods {
			p := &corev1.Pod{}
			require.NoError(b, p.Unmarshal(encoded[i]))
			_, err := trimAPIPod(p)
			require.NoError(b, err)
			pods[i] = p
		}
		after := memStats()
		runtime.KeepAlive(pods)
		live += float64(after.HeapAlloc-before.HeapAlloc) / n
		inuse += float64(after.HeapInuse-before.HeapInuse) / n
	}
	b.ReportMetric(live/float64(b.N), "live-B/pod")
	b.ReportMetric(inuse/float64(b.N), "inuse-B/pod")
}

func memStats() runtime.MemStats {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m
}

// Pods with equal parts share them: one backing array for the conditions of pods Running since
// the same second, the template's containers, the default tolerations, the empty security
// context and the labels; a part that differs is the pod's own. A shared list has no room
// beyond its length, so an append copies it.
func TestTrimAPIPodSharesEqualParts(t *testing.T) {
	now := time.Now().Truncate(time.Second)
	a, b := decodeServed(t, servedPod(1, now)), decodeServed(t, servedPod(2, now.Add(500*time.Millisecond)))
	later := decodeServed(t, servedPod(3, now.Add(time.Second)))
	want := []*corev1.Pod{a.DeepCopy(), b.DeepCopy(), later.DeepCopy()}
	for _, p := range []*corev1.Pod{a, b, later} {
		_, err := trimAPIPod(p)
		require.NoError(t, err)
	}
	for i, p := range []*corev1.Pod{a, b, later} {
		_, err := trimAPIPod(want[i])
		require.NoError(t, err)
		assert.Equal(t, want[i], p, "values unchanged")
	}

	assert.Same(t, &a.Status.Conditions[0], &b.Status.Conditions[0], "conditions of the same second")
	assert.Equal(t, len(a.Status.Conditions), cap(a.Status.Conditions))
	assert.NotSame(t, &a.Status.Conditions[0], &later.Status.Conditions[0], "another second's conditions")
	assert.Same(t, &a.Spec.Containers[0], &later.Spec.Containers[0])
	assert.Same(t, &a.Spec.Tolerations[0], &later.Spec.Tolerations[0])
	assert.Same(t, a.Spec.SecurityContext, later.Spec.SecurityContext)
	assert.Equal(t, fmt.Sprintf("%p", a.Labels), fmt.Sprintf("%p", later.Labels), "one labels map")
	assert.NotSame(t, &a.Status.ContainerStatuses[0], &b.Status.ContainerStatuses[0], "container statuses are each pod's own")
	assert.Same(t, a.Status.StartTime, b.Status.StartTime, "start times of the same second")
	assert.NotSame(t, a.Status.StartTime, later.Status.StartTime)
	assert.Same(t, a.Status.ContainerStatuses[0].State.Running, b.Status.ContainerStatuses[0].State.Running)
	assert.Same(t, a.Spec.TerminationGracePeriodSeconds, later.Spec.TerminationGracePeriodSeconds)
	assert.Same(t, a.Spec.PreemptionPolicy, later.Spec.PreemptionPolicy)
	assert.Same(t, &a.Status.HostIPs[0], &later.Status.HostIPs[0])
	assert.NotSame(t, &a.Status.PodIPs[0], &b.Status.PodIPs[0], "pod IPs are each pod's own")

	grown := append(a.Status.Conditions, corev1.PodCondition{Type: "Other"})
	assert.NotSame(t, &grown[0], &b.Status.Conditions[0], "an append copies a shared list")
	assert.Len(t, b.Status.Conditions, 5)

	other := decodeServed(t, servedPod(4, now))
	other.Labels["tier"] = "web"
	_, err := trimAPIPod(other)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"app": "vkbench"}, a.Labels, "different labels are not merged")
	assert.Equal(t, map[string]string{"app": "vkbench", "tier": "web"}, other.Labels)
}

// A time the decoder cannot have made (a fraction of a second, another zone) has more to it
// than its encoding: it is never swapped for another with the same encoding.
func TestTrimAPIPodKeepsTimesItDidNotDecode(t *testing.T) {
	now := time.Now().Truncate(time.Second)
	decoded := decodeServed(t, servedPod(1, now))
	_, err := trimAPIPod(decoded)
	require.NoError(t, err)
	made := servedPod(2, now)
	fraction := metav1.NewTime(now.Add(time.Millisecond))
	made.Status.StartTime = &fraction
	made.Status.Conditions[0].LastTransitionTime = fraction
	_, err = trimAPIPod(made)
	require.NoError(t, err)
	assert.Same(t, &fraction, made.Status.StartTime)
	assert.Equal(t, fraction, made.Status.Conditions[0].LastTransitionTime)
	assert.NotSame(t, &decoded.Status.Conditions[0], &made.Status.Conditions[0])
}

// Every table of shared parts stays within its bound.
func TestValueTableIsBounded(t *testing.T) {
	tab := newValueTable[int](4, 8)
	assert.Equal(t, 1, tab.share([]byte("one"), 1))
	assert.Equal(t, 1, tab.share([]byte("one"), 2), "the first value with an encoding is shared")
	for i := range 100 {
		tab.share(fmt.Appendf(nil, "k%d", i), i)
		require.LessOrEqual(t, len(tab.m), 4)
	}
	assert.Equal(t, 7, tab.share([]byte("too long a key"), 7))
	_, held := tab.get([]byte("too long a key"))
	assert.False(t, held)

	scalars := newScalarTable[int64](4)
	one, other := ptr.To[int64](1), ptr.To[int64](1)
	assert.Same(t, one, scalars.share(one))
	assert.Same(t, one, scalars.share(other))
	for i := range int64(100) {
		scalars.share(&i)
		require.LessOrEqual(t, len(scalars.m), 4)
	}
	assert.Nil(t, scalars.share(nil))
}

// A pod trimmed again (WithTransform allows it) after the tables started over writes nothing
// into the parts it shares with other pods: it gets copies of its own.
func TestTrimAPIPodAgainWritesNoSharedPart(t *testing.T) {
	s := newAPIPodSharer()
	now := time.Now().Truncate(time.Second)
	a, b := decodeServed(t, servedPod(1, now)), decodeServed(t, servedPod(2, now))
	s.share(a)
	s.share(b)
	shared := b.DeepCopy()
	containers, conds, labels := b.Spec.Containers, b.Status.Conditions, b.Labels
	image, condType, label := unsafe.StringData(containers[0].Image), unsafe.StringData(string(conds[0].Type)), unsafe.StringData(labels["app"])

	s = newAPIPodSharer() // as if the tables had started over
	s.share(b)
	assert.Equal(t, shared, b, "values unchanged")
	assert.Same(t, image, unsafe.StringData(containers[0].Image), "the shared containers are not written to")
	assert.Same(t, condType, unsafe.StringData(string(conds[0].Type)))
	assert.Same(t, label, unsafe.StringData(labels["app"]))
	assert.NotSame(t, &containers[0], &b.Spec.Containers[0], "a copy of its own")
	assert.Same(t, &a.Spec.Containers[0], &containers[0], "a keeps the parts it shared")
}

// Parts whose encoding is larger than the tables take are the pods' own, unchanged in value,
// and the buffer the sharer keeps for the next pod stays within that bound.
func TestTrimAPIPodLeavesLargePartsUnshared(t *testing.T) {
	s := newAPIPodSharer()
	now := time.Now().Truncate(time.Second)
	large := func(i int) *corev1.Pod {
		p := servedPod(i, now)
		p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "BIG", Value: string(make([]byte, 2*valueMaxKey))}}
		p.Labels["big"] = string(make([]byte, 2*valueMaxKey))
		return decodeServed(t, p)
	}
	a, b := large(1), large(2)
	want := b.DeepCopy()
	s.share(a)
	s.share(b)
	assert.Equal(t, want, b)
	assert.NotSame(t, &a.Spec.Containers[0], &b.Spec.Containers[0])
	assert.NotEqual(t, fmt.Sprintf("%p", a.Labels), fmt.Sprintf("%p", b.Labels))
	assert.True(t, sameBacking(a.Spec.Containers[0].Image, b.Spec.Containers[0].Image), "their strings are interned all the same")
	assert.LessOrEqual(t, cap(s.buf), 2*valueMaxKey)
}

// The config.source stamp is written before the annotations are shared, never into a shared
// map: labels and annotations with the same entries share one map, and a stamp written into
// it afterwards showed up in the other pods' labels, in either order.
func TestTrimAPIPodStampsNoSharedMap(t *testing.T) {
	now := time.Now().Truncate(time.Second)
	entries := func() map[string]string { // unique to this test: the process's tables are shared
		return map[string]string{"team": t.Name(), "tier": t.Name() + "-backend"}
	}
	pod := func(i int, labels, annotations map[string]string) *corev1.Pod {
		p := servedPod(i, now)
		p.Labels, p.Annotations = labels, annotations
		obj, err := trimAPIPod(decodeServed(t, p))
		require.NoError(t, err)
		return obj.(*corev1.Pod)
	}
	labelled := pod(1, entries(), nil)
	annotated := pod(2, nil, entries())
	labelledAfter := pod(3, entries(), nil)

	assert.Equal(t, entries(), labelled.Labels, "labels shared before the annotations")
	assert.Equal(t, entries(), labelledAfter.Labels, "labels shared after the annotations")
	want := entries()
	want[podutil.ConfigSourceAnnotationKey] = podutil.APIServerSource
	assert.Equal(t, want, annotated.Annotations)

	again, err := trimAPIPod(annotated) // WithTransform may trim a pod twice
	require.NoError(t, err)
	assert.Equal(t, want, again.(*corev1.Pod).Annotations)
	assert.Equal(t, entries(), labelled.Labels)
}
