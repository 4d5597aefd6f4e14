package integration

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/kubeclient"
)

// answerSizes records the bytes and content type of every answer's body, read to its end.
type answerSizes struct {
	mu    sync.Mutex
	last  answer
	inner http.RoundTripper
}

type answer struct {
	contentType string
	bytes       int
	head        []byte // the first bytes: the protobuf envelope's kind
}

func (a *answerSizes) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := a.inner.RoundTrip(req)
	if err == nil {
		resp.Body = &countingBody{ReadCloser: resp.Body, a: a, contentType: resp.Header.Get("Content-Type")}
	}
	return resp, err
}

type countingBody struct {
	io.ReadCloser
	a           *answerSizes
	contentType string
	n           int
	head        []byte
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n += n
	if len(b.head) < 64 {
		b.head = append(b.head, p[:min(n, 64-len(b.head))]...)
	}
	if err == io.EOF {
		b.a.mu.Lock()
		b.a.last = answer{b.contentType, b.n, b.head}
		b.a.mu.Unlock()
	}
	return n, err
}

// take returns the last answer read to its end and forgets it.
func (a *answerSizes) take() answer {
	a.mu.Lock()
	defer a.mu.Unlock()
	last := a.last
	a.last = answer{}
	return last
}

// newSizedClient is newClient's client, the agent's content types, with every answer's size
// recorded.
func newSizedClient(t *testing.T) (*rest.RESTClient, *answerSizes) {
	t.Helper()
	cfg := rest.CopyConfig(env.AdminConfig)
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	sizes := &answerSizes{}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { sizes.inner = rt; return sizes })
	c, err := kubeclient.New(cfg)
	require.NoError(t, err)
	rc, ok := c.CoreRESTClient().(*rest.RESTClient)
	require.True(t, ok, "CoreRESTClient is %T", c.CoreRESTClient())
	return rc, sizes
}

// send is SendDroppingAnswer, or with metadataOnly false the same request with the client's
// own Accept header (the whole object), the answer dropped alike.
func send(ctx context.Context, req *rest.Request, metadataOnly bool) error {
	if metadataOnly {
		return kubeclient.SendDroppingAnswer(ctx, req)
	}
	body, err := req.Stream(ctx)
	if err != nil {
		return err
	}
	defer body.Close()
	_, err = io.Copy(io.Discard, body)
	return err
}

// TestSendDroppingAnswerAsksForMetadataOnly: the writes the agent makes per pod (status patch,
// Started event, terminal status patch, DELETE with grace 0 and the UID as precondition) are
// answered with the object's metadata only, in protobuf, and that answer is smaller than the
// whole object's. The sizes are logged (docs/performance.md, "CPU per write").
func TestSendDroppingAnswerAsksForMetadataOnly(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns := env.Namespace(t)
	rc, sizes := newSizedClient(t)

	type write struct {
		what string
		req  func(name string, uid types.UID) *rest.Request
	}
	writes := []write{
		{"status patch", func(name string, uid types.UID) *rest.Request {
			return rc.Patch(types.StrategicMergePatchType).Namespace(ns).Resource("pods").Name(name).SubResource("status").
				Body([]byte(fmt.Sprintf(`{"metadata":{"uid":%q},"status":{"phase":"Running","podIP":"10.0.0.7","podIPs":[{"ip":"10.0.0.7"},{"$patch":"replace"}],`+
					`"conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2026-11-25T00:00:00Z"}],`+
					`"containerStatuses":[{"name":"c","image":"registry.k8s.io/pause:3.10","imageID":"","ready":true,"restartCount":0,"started":true,`+
					`"state":{"running":{"startedAt":"2026-11-25T00:00:00Z"}}}]}}`, uid)))
		}},
		{"event", func(name string, uid types.UID) *rest.Request {
			return rc.Post().Namespace(ns).Resource("events").Body(&corev1.Event{
				ObjectMeta:     metav1.ObjectMeta{GenerateName: name + "."},
				InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: name, UID: uid, APIVersion: "v1", FieldPath: "spec.containers{c}"},
				Reason:         "Started", Message: "Started container c", Type: corev1.EventTypeNormal,
				Source:         corev1.EventSource{Component: "kubelet", Host: "answer-node"},
				FirstTimestamp: metav1.Now(), LastTimestamp: metav1.Now(), Count: 1,
			})
		}},
		{"delete", func(name string, uid types.UID) *rest.Request {
			opts := metav1.NewDeleteOptions(0)
			opts.Preconditions = metav1.NewUIDPreconditions(string(uid))
			return rc.Delete().Namespace(ns).Resource("pods").Name(name).Body(opts)
		}},
	}
	total := map[bool]int{}
	for _, metadataOnly := range []bool{false, true} {
		name := fmt.Sprintf("p-%t", metadataOnly)
		pod := &corev1.Pod{}
		require.NoError(t, rc.Post().Namespace(ns).Resource("pods").Body(&corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "vkbench"}},
			Spec: corev1.PodSpec{NodeName: "answer-node", AutomountServiceAccountToken: ptr.To(false),
				Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}},
		}).Do(ctx).Into(pod))
		for _, w := range writes {
			require.NoError(t, send(ctx, w.req(name, pod.UID), metadataOnly), w.what)
			got := sizes.take()
			require.NotZero(t, got.bytes, "%s: no answer read to its end", w.what)
			// The content type has no parameters either way; the envelope names the kind.
			assert.Equal(t, "application/vnd.kubernetes.protobuf", got.contentType, w.what)
			assert.Equal(t, metadataOnly, strings.Contains(string(got.head), "PartialObjectMetadata"), "%s: %q", w.what, got.head)
			t.Logf("%s, metadata only %t: %d bytes (%s)", w.what, metadataOnly, got.bytes, got.contentType)
			total[metadataOnly] += got.bytes
		}
	}
	t.Logf("per pod's writes: %d bytes whole, %d metadata only", total[false], total[true])
	assert.Less(t, total[true], total[false])
}

// TestSendDroppingAnswerErrors: an error answer to a write sent with SendDroppingAnswer is the
// API error it is, as the callers tell them apart: NotFound, Conflict (the UID precondition of
// a DELETE), Invalid (a status patch's metadata.uid that is not the pod's is refused as a change
// of an immutable field, not as a conflict).
func TestSendDroppingAnswerErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns := env.Namespace(t)
	rc, _ := newSizedClient(t)
	created := &corev1.Pod{}
	require.NoError(t, rc.Post().Namespace(ns).Resource("pods").Body(&corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec:       corev1.PodSpec{NodeName: "answer-node", Containers: []corev1.Container{{Name: "c", Image: "img"}}},
	}).Do(ctx).Into(created))

	statusPatch := func(name, body string) *rest.Request {
		return rc.Patch(types.StrategicMergePatchType).Namespace(ns).Resource("pods").Name(name).SubResource("status").Body([]byte(body))
	}
	deletion := func(name string, uid types.UID) *rest.Request {
		opts := metav1.NewDeleteOptions(0)
		opts.Preconditions = metav1.NewUIDPreconditions(string(uid))
		return rc.Delete().Namespace(ns).Resource("pods").Name(name).Body(opts)
	}
	for _, tc := range []struct {
		what  string
		req   *rest.Request
		check func(error) bool
	}{
		{"status patch of a missing pod", statusPatch("missing", `{"status":{"phase":"Running"}}`), apierrors.IsNotFound},
		{"status patch with another UID", statusPatch("p", `{"metadata":{"uid":"00000000-0000-0000-0000-000000000001"},"status":{"phase":"Running"}}`), kubeclient.IsReplaced},
		{"invalid status patch", statusPatch("p", `{"status":{"podIP":"not-an-address","podIPs":[{"ip":"not-an-address"}]}}`), apierrors.IsInvalid},
		{"event of another namespace", rc.Post().Namespace(ns).Resource("events").Body(&corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{GenerateName: "p."},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "elsewhere", Name: "p"}, Reason: "Started", Type: corev1.EventTypeNormal,
		}), apierrors.IsInvalid},
		{"delete of a missing pod", deletion("missing", "00000000-0000-0000-0000-000000000001"), apierrors.IsNotFound},
		{"delete with another UID", deletion("p", "00000000-0000-0000-0000-000000000001"), kubeclient.IsReplaced},
	} {
		err := kubeclient.SendDroppingAnswer(ctx, tc.req)
		require.Error(t, err, tc.what)
		assert.True(t, tc.check(err), "%s: %v (%T, reason %s)", tc.what, err, err, apierrors.ReasonForError(err))
		if tc.what == "invalid status patch" {
			assert.False(t, kubeclient.IsReplaced(err), "a refused status is not a replaced pod")
		}
		var status apierrors.APIStatus
		assert.ErrorAs(t, err, &status, tc.what)
	}

	// The pod is still there: none of the refused writes changed it, and its DELETE goes through.
	got := &corev1.Pod{}
	require.NoError(t, rc.Get().Namespace(ns).Resource("pods").Name("p").Do(ctx).Into(got))
	assert.Equal(t, created.UID, got.UID)
	assert.Empty(t, got.Status.PodIP)
	require.NoError(t, kubeclient.SendDroppingAnswer(ctx, deletion("p", created.UID)))
	err := rc.Get().Namespace(ns).Resource("pods").Name("p").Do(ctx).Error()
	assert.True(t, apierrors.IsNotFound(err), "after the DELETE: %v", err)
}

// BenchmarkDroppedAnswer sends the agent's status patch of one pod (a new message each time,
// so that every patch is a write) with the answer dropped, the whole pod's or its metadata
// only: answer bytes and this process's CPU (user + system, the client's side only) per write.
//
//	VK_STATIC_TESTBIN=... go test -run XXX -bench DroppedAnswer -benchtime 2000x ./kubeclient/integration/
func BenchmarkDroppedAnswer(b *testing.B) {
	for _, metadataOnly := range []bool{false, true} {
		b.Run(fmt.Sprintf("metadataOnly=%t", metadataOnly), func(b *testing.B) {
			ctx := context.Background()
			ns := env.Namespace(b)
			cfg := rest.CopyConfig(env.AdminConfig)
			cfg.ContentType = "application/vnd.kubernetes.protobuf"
			cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
			cfg.QPS = -1
			sizes := &answerSizes{}
			cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { sizes.inner = rt; return sizes })
			c, err := kubeclient.New(cfg)
			require.NoError(b, err)
			rc := c.CoreRESTClient().(*rest.RESTClient)
			pod := &corev1.Pod{}
			require.NoError(b, rc.Post().Namespace(ns).Resource("pods").Body(&corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"app": "vkbench"}},
				Spec: corev1.PodSpec{NodeName: "answer-node", AutomountServiceAccountToken: ptr.To(false),
					Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}},
			}).Do(ctx).Into(pod))
			var bytes int
			server := apiServerPID(b)
			start, serverStart := cpuTime(), processCPU(b, server)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				patch := fmt.Sprintf(`{"metadata":{"uid":%q},"status":{"phase":"Running","message":"write %d","podIP":"10.0.0.7","podIPs":[{"ip":"10.0.0.7"},{"$patch":"replace"}],`+
					`"conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2026-11-25T00:00:00Z"}],`+
					`"containerStatuses":[{"name":"c","image":"registry.k8s.io/pause:3.10","imageID":"","ready":true,"restartCount":0,"started":true,`+
					`"state":{"running":{"startedAt":"2026-11-25T00:00:00Z"}}}]}}`, pod.UID, i)
				if err := send(ctx, rc.Patch(types.StrategicMergePatchType).Namespace(ns).Resource("pods").Name("p").SubResource("status").Body([]byte(patch)), metadataOnly); err != nil {
					b.Fatal(err)
				}
				bytes += sizes.take().bytes
			}
			b.StopTimer()
			b.ReportMetric(float64(bytes)/float64(b.N), "answer-B/op")
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "client-cpu-ns/op")
			b.ReportMetric(float64(processCPU(b, server)-serverStart)/float64(b.N), "apiserver-cpu-ns/op")
		})
	}
}

// cpuTime is this process's user + system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// apiServerPID is the test control plane's kube-apiserver, a child of this process.
func apiServerPID(b *testing.B) int {
	entries, err := os.ReadDir("/proc")
	require.NoError(b, err)
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		rest := string(stat[strings.LastIndexByte(string(stat), ')')+2:])
		fields := strings.Fields(rest)
		if strings.Contains(string(stat), "(kube-apiserver)") && fields[1] == strconv.Itoa(os.Getpid()) {
			return pid
		}
	}
	b.Fatal("no kube-apiserver child")
	return 0
}

// processCPU is pid's user + system CPU time (/proc/PID/stat, in clock ticks of 10 ms).
func processCPU(b *testing.B, pid int) time.Duration {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	require.NoError(b, err)
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
	utime, _ := strconv.Atoi(fields[11])
	stime, _ := strconv.Atoi(fields[12])
	return time.Duration(utime+stime) * 10 * time.Millisecond
}
