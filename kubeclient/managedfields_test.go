package kubeclient

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	restclientwatch "k8s.io/client-go/rest/watch"
	"k8s.io/utils/ptr"
)

// protobufInfo is the protobuf serializer of ns.
func protobufInfo(t testing.TB, ns runtime.NegotiatedSerializer) runtime.SerializerInfo {
	t.Helper()
	info, ok := runtime.SerializerInfoForMediaType(ns.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	require.True(t, ok)
	return info
}

// encodePod is pod as the API server sends it in protobuf: the envelope, kind v1 Pod.
func encodePod(t testing.TB, pod *corev1.Pod) []byte {
	t.Helper()
	c := newCodecs()
	var buf bytes.Buffer
	require.NoError(t, c.serializer.EncoderForVersion(protobufInfo(t, c.serializer).Serializer, corev1.SchemeGroupVersion).Encode(pod, &buf))
	return buf.Bytes()
}

// decodePod decodes data as the client does.
func decodePod(data []byte) (*corev1.Pod, error) {
	pod := &corev1.Pod{}
	_, _, err := testProtobuf.Serializer.Decode(data, nil, pod)
	return pod, err
}

// testProtobuf is the protobuf serializer decodePod uses, built once: fuzzing calls it a lot.
var testProtobuf, _ = runtime.SerializerInfoForMediaType(newCodecs().serializer.SupportedMediaTypes(), runtime.ContentTypeProtobuf)

// managedFieldsEntry is one entry with a field set of size about n bytes.
func managedFieldsEntry(r *rand.Rand, n int) metav1.ManagedFieldsEntry {
	fields := []byte(`{"f:status":{`)
	for i := 0; len(fields) < n; i++ {
		fields = fmt.Appendf(fields, `"f:field%d":{".":{},"f:x":{}},`, r.IntN(1000))
	}
	fields = append(fields[:len(fields)-1], "}}"...)
	e := metav1.ManagedFieldsEntry{Manager: randString(r, 12), Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
		Time: ptr.To(metav1.NewTime(time.Unix(r.Int64N(1<<31), 0))), FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: fields}}
	if r.IntN(2) == 0 {
		e.Subresource = "status"
	}
	return e
}

func randString(r *rand.Rand, n int) string {
	b := make([]byte, r.IntN(n+1))
	for i := range b {
		b[i] = byte('a' + r.IntN(26))
	}
	return string(b)
}

// randomPod is a pod with random metadata (managedFields among other fields, in any number,
// field sets of up to 3 KB), spec and status.
func randomPod(r *rand.Rand) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: randString(r, 20), Namespace: randString(r, 10), UID: types.UID(randString(r, 36)),
			ResourceVersion: fmt.Sprint(r.Int64()), Generation: r.Int64N(10),
			CreationTimestamp: metav1.NewTime(time.Unix(r.Int64N(1<<31), 0))},
		Spec: corev1.PodSpec{NodeName: randString(r, 10), AutomountServiceAccountToken: ptr.To(r.IntN(2) == 0)},
	}
	if r.IntN(2) == 0 {
		pod.Labels = map[string]string{randString(r, 5): randString(r, 5), "app": randString(r, 300)}
	}
	if r.IntN(2) == 0 {
		pod.Annotations = map[string]string{randString(r, 8): randString(r, 2000)}
	}
	if r.IntN(3) == 0 {
		pod.DeletionTimestamp = ptr.To(metav1.NewTime(time.Unix(r.Int64N(1<<31), 0)))
		pod.DeletionGracePeriodSeconds = ptr.To(r.Int64N(60))
	}
	if r.IntN(3) == 0 {
		pod.Finalizers = []string{randString(r, 20)}
		pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: randString(r, 10), UID: types.UID(randString(r, 36))}}
	}
	for range r.IntN(5) {
		pod.ManagedFields = append(pod.ManagedFields, managedFieldsEntry(r, r.IntN(3000)))
	}
	for range 1 + r.IntN(3) {
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: randString(r, 10), Image: randString(r, 40),
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: *resource.NewMilliQuantity(r.Int64N(4000), resource.DecimalSI)}}})
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{Name: randString(r, 10), Ready: r.IntN(2) == 0,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(time.Unix(r.Int64N(1<<31), 0))}}})
	}
	pod.Status.Phase = corev1.PodRunning
	pod.Status.PodIP = randString(r, 15)
	pod.Status.Message = randString(r, 500)
	return pod
}

// checkStripped: decoding data after stripPodManagedFields is decoding it as it is, then
// clearing managedFields — or, if data does not decode, no panic.
func checkStripped(t *testing.T, data []byte) {
	t.Helper()
	want, err := decodePod(data)
	stripped := stripPodManagedFields(bytes.Clone(data))
	got, gotErr := decodePod(stripped)
	if err != nil {
		return // the stripped bytes may decode or not: malformed managedFields are not decoded any more
	}
	require.NoError(t, gotErr)
	want.ManagedFields = nil
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("stripped pod differs:\nwant %+v\ngot  %+v", want, got)
	}
	if len(stripped) > len(data) {
		t.Fatalf("stripped %d bytes into %d", len(data), len(stripped))
	}
}

func TestStripPodManagedFieldsRandomPods(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	withFields := 0
	for range 2000 {
		pod := randomPod(r)
		data := encodePod(t, pod)
		stripped := stripPodManagedFields(bytes.Clone(data))
		got, err := decodePod(stripped)
		require.NoError(t, err)
		assert.Empty(t, got.ManagedFields)
		if len(pod.ManagedFields) > 0 {
			withFields++
			assert.Less(t, len(stripped), len(data))
		} else {
			assert.Equal(t, data, stripped) // nothing to strip: untouched
		}
		checkStripped(t, data)
	}
	assert.Greater(t, withFields, 1000)
}

// TestStripPodManagedFieldsLeavesOthers: other kinds, other versions, JSON, malformed
// envelopes and bytes without the magic are returned as they are.
func TestStripPodManagedFieldsLeavesOthers(t *testing.T) {
	c := newCodecs()
	enc := c.serializer.EncoderForVersion(protobufInfo(t, c.serializer).Serializer, corev1.SchemeGroupVersion)
	mf := []metav1.ManagedFieldsEntry{managedFieldsEntry(rand.New(rand.NewPCG(1, 1)), 200)}
	var node bytes.Buffer
	require.NoError(t, enc.Encode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", ManagedFields: mf}}, &node))
	pod := encodePod(t, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", ManagedFields: mf}})
	for name, data := range map[string][]byte{
		"node":            node.Bytes(),
		"json":            []byte(`{"kind":"Pod","apiVersion":"v1","metadata":{"managedFields":[{}]}}`),
		"empty":           nil,
		"magic only":      []byte("k8s\x00"),
		"truncated":       pod[:len(pod)-3],
		"truncated early": pod[:12],
		"group":           append([]byte("k8s\x00"), 0x0b, 0x0c), // a start-group tag
	} {
		assert.Equal(t, data, stripPodManagedFields(bytes.Clone(data)), name)
	}
	other := bytes.Replace(bytes.Clone(pod), []byte("\x12\x03Pod"), []byte("\x12\x03Poe"), 1)
	require.NotEqual(t, pod, other)
	assert.Equal(t, other, stripPodManagedFields(bytes.Clone(other)), "kind Poe")
	v2 := bytes.Replace(bytes.Clone(pod), []byte("\x0a\x02v1"), []byte("\x0a\x02v2"), 1)
	require.NotEqual(t, pod, v2)
	assert.Equal(t, v2, stripPodManagedFields(bytes.Clone(v2)), "version v2")
}

// FuzzStripPodManagedFields mutates encoded pods: stripping never panics, never grows the
// bytes, and whatever decodes decodes to the same pod without managedFields. `go test` runs
// the seeds; `go test -run XXX -fuzz FuzzStripPodManagedFields -fuzztime 60s ./kubeclient/`
// explores.
func FuzzStripPodManagedFields(f *testing.F) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 20 {
		f.Add(encodePod(f, randomPod(r)))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkStripped(t, data)
	})
}

// TestWatchedPodsLoseManagedFields: through New's negotiated serializer, a watch's pod
// events are decoded without managedFields, other kinds' keep theirs, and a decode outside a
// watch keeps them too.
func TestWatchedPodsLoseManagedFields(t *testing.T) {
	c := newCodecs()
	ns := stripWatchedPods(c.serializer.WithoutConversion())
	mf := []metav1.ManagedFieldsEntry{managedFieldsEntry(rand.New(rand.NewPCG(1, 1)), 200)}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", ManagedFields: mf}}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", ManagedFields: mf}}
	w := watchOf(t, ns, watchStream(t, pod, node))
	typ, obj, err := w.Decode()
	require.NoError(t, err)
	assert.Equal(t, watch.Modified, typ)
	require.IsType(t, &corev1.Pod{}, obj)
	assert.Equal(t, "p", obj.(*corev1.Pod).Name)
	assert.Nil(t, obj.(*corev1.Pod).ManagedFields)
	_, obj, err = w.Decode()
	require.NoError(t, err)
	require.IsType(t, &corev1.Node{}, obj)
	assert.Len(t, obj.(*corev1.Node).ManagedFields, 1)
	_, _, err = w.Decode()
	assert.ErrorIs(t, err, io.EOF)

	got := &corev1.Pod{}
	_, _, err = protobufInfo(t, ns).Serializer.Decode(encodePod(t, pod), nil, got)
	require.NoError(t, err)
	assert.Len(t, got.ManagedFields, 1, "outside a watch")
}

// watchStream is objs as a protobuf watch stream of Modified events, as the API server sends it.
func watchStream(t testing.TB, objs ...runtime.Object) []byte {
	t.Helper()
	c := newCodecs()
	info := protobufInfo(t, c.serializer)
	enc := c.serializer.EncoderForVersion(info.Serializer, corev1.SchemeGroupVersion)
	var stream bytes.Buffer
	fw := info.StreamSerializer.Framer.NewFrameWriter(&stream)
	for _, obj := range objs {
		var raw bytes.Buffer
		require.NoError(t, enc.Encode(obj, &raw))
		require.NoError(t, info.StreamSerializer.Encode(&metav1.WatchEvent{Type: string(watch.Modified), Object: runtime.RawExtension{Raw: raw.Bytes()}}, fw))
	}
	return stream.Bytes()
}

// watchOf decodes stream as client-go's REST client decodes a watch (Request.newStreamWatcher).
func watchOf(t testing.TB, ns runtime.NegotiatedSerializer, stream []byte) *restclientwatch.Decoder {
	info := protobufInfo(t, ns)
	frames := info.StreamSerializer.Framer.NewFrameReader(io.NopCloser(bytes.NewReader(stream)))
	return restclientwatch.NewDecoder(streaming.NewDecoder(frames, info.StreamSerializer.Serializer), ns.DecoderToVersion(info.Serializer, nil))
}

// BenchmarkWatchDecodePod decodes the watch event of an api-1k pod at Running (two managedFields
// entries: its creator's and the agent's status writes) as client-go does, with and without the
// stripping: allocations and time per event.
//
//	go test -run XXX -bench WatchDecodePod -benchmem ./kubeclient/
func BenchmarkWatchDecodePod(b *testing.B) {
	pod := benchPod()
	const events = 1000
	objs := make([]runtime.Object, events)
	for i := range objs {
		objs[i] = pod
	}
	stream := watchStream(b, objs...)
	b.Logf("pod %d bytes in protobuf, %d without managedFields", len(encodePod(b, pod)), len(stripPodManagedFields(encodePod(b, pod))))
	for _, strip := range []bool{false, true} {
		b.Run(fmt.Sprintf("strip=%t", strip), func(b *testing.B) {
			c := newCodecs()
			var ns runtime.NegotiatedSerializer = c.serializer.WithoutConversion()
			if strip {
				ns = stripWatchedPods(ns)
			}
			b.ReportAllocs()
			var w *restclientwatch.Decoder
			for i := 0; i < b.N; i++ {
				if i%events == 0 {
					b.StopTimer()
					w = watchOf(b, ns, stream)
					b.StartTimer()
				}
				if _, _, err := w.Decode(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchPod is an api-1k pod ([github.com/vk-static/vk-static/bench.benchPod]) at Running as
// the API server holds it: defaulted spec, the agent's status, the creator's and the agent's
// managedFields.
func benchPod() *corev1.Pod {
	now := metav1.NewTime(time.Date(2026, 11, 25, 20, 0, 0, 0, time.UTC))
	cond := func(t corev1.PodConditionType) corev1.PodCondition {
		return corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: now}
	}
	condFields := func(t string) string {
		return `"k:{\"type\":\"` + t + `\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},`
	}
	agentFields := `{"f:status":{"f:conditions":{` + condFields("ContainersReady") + condFields("Initialized") +
		condFields("PodReadyToStartContainers") + condFields("PodScheduled") + condFields("Ready")[:len(condFields("Ready"))-1] +
		`},"f:containerStatuses":{},"f:hostIP":{},"f:hostIPs":{},"f:phase":{},"f:podIP":{},"f:podIPs":{".":{},"k:{\"ip\":\"10.0.0.7\"}":{".":{},"f:ip":{}}},"f:qosClass":{},"f:startTime":{}}}`
	creatorFields := `{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:automountServiceAccountToken":{},"f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:resources":{},"f:terminationMessagePath":{},"f:terminationMessagePolicy":{}}},"f:dnsPolicy":{},"f:enableServiceLinks":{},"f:nodeName":{},"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},"f:terminationGracePeriodSeconds":{}}}`
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "pod-0042", Namespace: "vkbench-api-1k", UID: "4f6c1f2e-7c1b-4a55-9d0e-2b8f6a1c3d4e",
			ResourceVersion: "123456", CreationTimestamp: now, Labels: map[string]string{"app": "vkbench"},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: "vkbench", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &now, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(creatorFields)}},
				{Manager: "vk-static", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &now, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(agentFields)}, Subresource: "status"},
			}},
		Spec: corev1.PodSpec{
			NodeName: "vk-static-bench-1", AutomountServiceAccountToken: ptr.To(false),
			Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10", ImagePullPolicy: corev1.PullIfNotPresent,
				TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile}},
			RestartPolicy: corev1.RestartPolicyAlways, TerminationGracePeriodSeconds: ptr.To[int64](30), DNSPolicy: corev1.DNSClusterFirst,
			SecurityContext: &corev1.PodSecurityContext{}, SchedulerName: "default-scheduler", EnableServiceLinks: ptr.To(true),
			PreemptionPolicy: ptr.To(corev1.PreemptLowerPriority), Priority: ptr.To[int32](0),
			Tolerations: []corev1.Toleration{
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
				{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)}},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, QOSClass: corev1.PodQOSBestEffort, HostIP: "10.0.0.1", HostIPs: []corev1.HostIP{{IP: "10.0.0.1"}},
			PodIP: "10.0.0.7", PodIPs: []corev1.PodIP{{IP: "10.0.0.7"}}, StartTime: &now,
			Conditions: []corev1.PodCondition{cond(corev1.PodReadyToStartContainers), cond(corev1.PodInitialized), cond(corev1.PodReady), cond(corev1.ContainersReady), cond(corev1.PodScheduled)},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "c", Image: "registry.k8s.io/pause:3.10", Ready: true, Started: ptr.To(true),
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}},
		},
	}
}
