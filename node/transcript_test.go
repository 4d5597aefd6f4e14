package node_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/vk-static/vk-static/kubeclient/kubeclienttest"
	"github.com/vk-static/vk-static/mirror"
	"github.com/vk-static/vk-static/node"
	"github.com/vk-static/vk-static/podmanager"
	"github.com/vk-static/vk-static/podutil"
	"github.com/vk-static/vk-static/provider"
	"github.com/vk-static/vk-static/sources"
)

// A transcript test drives a PodController through steps, in the manner of etcd raft's
// interaction tests: each step is one input (updates from the sources, a scripted answer of the
// provider or of the API server, time passing) and the lines it must cause — a line per
// provider command, API write and event, rendered so that a failure reads like the
// conversation it was:
//
//	> api: DELETE default/web (web-1, grace 30s)
//	provider: DeletePod default/web web-1 grace=30s
//	> clock: +2s (t=42s)
//	api: delete pods default/web grace=0 uid=web-1
//
// The controller runs in a synctest bubble on a fake clock (PodControllerConfig.Clock): after
// each input, synctest.Wait returns once every goroutine of the controller is blocked, so the
// step's lines are all there will be — nothing is polled for and nothing slept — and every timer
// the controller will wait on is armed before the clock is advanced. (The fake clock's
// HasWaiters cannot tell that: the work queues' heartbeats and the status poll's ticker are
// always waiting.) Reads (GetPodStatus, GetPod, GET) are not lines: the status poll's answers
// show in what the controller does with them.
//
// A step that crosses a poll (every 10 s) while a sync starts or forgets a pod races the poller:
// whether the poll saw the pod decides whether its status is written in that step. Cases keep
// the two apart, or run standalone (no status writes).

// transcriptEpoch is when the fake clock starts.
var transcriptEpoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// Settings of every transcript's controller. The intervals are round so that readers can tell
// which step a timer fires in: a poll every 10 s from the start, a resync 60–90 s after a
// successful sync.
const (
	transcriptPollInterval  = 10 * time.Second
	transcriptSyncFrequency = time.Minute
)

// transcript collects the lines of one run, inputs included (prefixed "> ").
type transcript struct {
	mu    sync.Mutex
	lines []string
}

func (tr *transcript) add(format string, args ...any) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.lines = append(tr.lines, fmt.Sprintf(format, args...))
}

func (tr *transcript) snapshot() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]string(nil), tr.lines...)
}

// worker names which of the controller's goroutines writes a line: the sync worker (one, so its
// lines come in order), or the status writer — which also completes an API pod's deletion, its
// terminal status then its DELETE (the only pods deleted in these transcripts). Their lines may
// interleave within a step.
func worker(line string) string {
	f := strings.Fields(line)
	switch {
	case len(f) > 2 && f[0] == "api:" && strings.HasSuffix(f[2], "/status"):
		return "status writer"
	case len(f) > 2 && f[0] == "api:" && f[1] == "delete" && f[2] == "pods":
		return "status writer"
	case len(f) > 2 && f[0] == "event:" && f[2] == "Started":
		return "status writer"
	}
	return "sync worker"
}

func byWorker(lines []string) map[string][]string {
	out := map[string][]string{}
	for _, l := range lines {
		if !strings.HasPrefix(l, "> ") {
			out[worker(l)] = append(out[worker(l)], l)
		}
	}
	return out
}

// sameLines: each worker's lines are the same, in the same order.
func sameLines(want, got []string) bool {
	w, g := byWorker(want), byWorker(got)
	if len(w) != len(g) {
		return false
	}
	for k, lines := range w {
		if strings.Join(lines, "\n") != strings.Join(g[k], "\n") {
			return false
		}
	}
	return true
}

// fakeProvider runs pods in a map and writes every command it is given to the transcript. It
// does not implement provider.PodNotifier, so the controller polls it for status. The test scripts
// it: refuse a UID (provider.InvalidInput), be slow to stop a UID (DeletePod leaves it running until
// the test stops it), fail to list.
type fakeProvider struct {
	log   *transcript
	clock clock.PassiveClock

	mu      sync.Mutex
	pods    map[string]*corev1.Pod // by namespace/name
	refuse  map[types.UID]string   // UID → why it is refused
	slow    map[types.UID]bool
	listErr error
}

var _ provider.PodLifecycleHandler = (*fakeProvider)(nil)

func newFakeProvider(log *transcript, clk clock.PassiveClock) *fakeProvider {
	return &fakeProvider{log: log, clock: clk, pods: map[string]*corev1.Pod{}, refuse: map[types.UID]string{}, slow: map[types.UID]bool{}}
}

func providerKey(namespace, name string) string { return namespace + "/" + name }

func (p *fakeProvider) CreatePod(_ context.Context, pod *corev1.Pod) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	key := providerKey(pod.Namespace, pod.Name)
	line := fmt.Sprintf("provider: CreatePod %s %s", key, pod.UID)
	if why, ok := p.refuse[pod.UID]; ok {
		p.log.add("%s → invalid input: %s", line, why)
		return provider.InvalidInput("%s", why)
	}
	if old, ok := p.pods[key]; ok && old.UID != pod.UID && !terminal(old) {
		// What a real provider answers, and what the controller must never cause: one pod per name.
		p.log.add("%s → the name is taken by %s", line, old.UID)
		return fmt.Errorf("pod %s: the name is taken by %s", key, old.UID)
	}
	p.log.add("%s", line)
	pod.Status = runningStatus(pod, p.clock.Now())
	p.pods[key] = pod
	return nil
}

func (p *fakeProvider) UpdatePod(_ context.Context, pod *corev1.Pod) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	key := providerKey(pod.Namespace, pod.Name)
	p.log.add("provider: UpdatePod %s %s", key, pod.UID)
	if old, ok := p.pods[key]; ok && old.UID == pod.UID {
		pod.Status = old.Status
		p.pods[key] = pod
	}
	return nil
}

func (p *fakeProvider) DeletePod(_ context.Context, pod *corev1.Pod) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	key := providerKey(pod.Namespace, pod.Name)
	line := fmt.Sprintf("provider: DeletePod %s %s grace=%ds", key, pod.UID, ptrValue(pod.DeletionGracePeriodSeconds))
	old, ok := p.pods[key]
	if !ok || old.UID != pod.UID {
		p.log.add("%s → not found", line)
		return provider.NotFound("pod %s %s", key, pod.UID)
	}
	p.log.add("%s", line)
	if !p.slow[pod.UID] {
		delete(p.pods, key) // stopped at once: the poll finds it gone
	}
	return nil
}

func (p *fakeProvider) GetPod(_ context.Context, namespace, name string) (*corev1.Pod, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pod, ok := p.pods[providerKey(namespace, name)]
	if !ok {
		return nil, provider.NotFound("pod %s/%s", namespace, name)
	}
	return pod.DeepCopy(), nil
}

func (p *fakeProvider) GetPodStatus(ctx context.Context, namespace, name string) (*corev1.PodStatus, error) {
	pod, err := p.GetPod(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	return &pod.Status, nil
}

func (p *fakeProvider) GetPods(context.Context) ([]*corev1.Pod, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.listErr != nil {
		return nil, p.listErr
	}
	pods := make([]*corev1.Pod, 0, len(p.pods))
	for _, pod := range p.pods {
		pods = append(pods, pod.DeepCopy())
	}
	return pods, nil
}

// stop ends the containers of the pod with uid: it reports a terminal status from now on.
func (p *fakeProvider) stop(uid types.UID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pod := range p.pods {
		if pod.UID == uid {
			pod.Status = stoppedStatus(pod, p.clock.Now())
		}
	}
}

func runningStatus(pod *corev1.Pod, now time.Time) corev1.PodStatus {
	started := metav1.NewTime(now)
	s := corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &started}
	for _, c := range pod.Spec.Containers {
		s.ContainerStatuses = append(s.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, Ready: true,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}},
		})
	}
	return s
}

func stoppedStatus(pod *corev1.Pod, now time.Time) corev1.PodStatus {
	s := *pod.Status.DeepCopy()
	s.Phase = corev1.PodSucceeded
	for i := range s.ContainerStatuses {
		cs := &s.ContainerStatuses[i]
		cs.Ready = false
		cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, FinishedAt: metav1.NewTime(now)}}
	}
	return s
}

func terminal(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

func ptrValue(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// fakeAPI is the API server: the fake clientset's object tracker, answering as the real one
// does (with a UID for every pod created, and a failed UID precondition as a Conflict) unless
// the test scripted the next answers to a verb and resource. Every pod write it accepts reaches
// the controller through the API source, in order, as its watch would deliver it: a create as
// ADD, a status patch as RECONCILE, a delete as REMOVE.
type fakeAPI struct {
	log     *transcript
	client  *fake.Clientset
	watch   chan sources.PodUpdate // to the controller; buffered, in the order written
	mu      sync.Mutex
	answers map[string][]error // "verb resource" → next answers
	created int
	lag     bool // the watch lags: echoes are held back
	lagged  []sources.PodUpdate
}

var podsResource = corev1.SchemeGroupVersion.WithResource("pods")

// react renders every write as a line (verb, resource/subresource, namespace/name, the delete
// options that matter, and the answer when it is an error) and answers it.
func (a *fakeAPI) react(action k8stesting.Action) (bool, runtime.Object, error) {
	switch action.GetVerb() {
	case "get", "list", "watch":
		return false, nil, nil
	}
	resource := action.GetResource().Resource
	if sub := action.GetSubresource(); sub != "" {
		resource += "/" + sub
	}
	var name, detail string
	switch act := action.(type) {
	case k8stesting.CreateAction:
		obj, _ := meta.Accessor(act.GetObject())
		name = obj.GetName()
	case k8stesting.DeleteAction:
		name = act.GetName()
		opts := act.GetDeleteOptions()
		detail = fmt.Sprintf(" grace=%d", ptrValue(opts.GracePeriodSeconds))
		if opts.Preconditions != nil && opts.Preconditions.UID != nil {
			detail += fmt.Sprintf(" uid=%s", *opts.Preconditions.UID)
		}
	case k8stesting.PatchAction:
		name = act.GetName()
	}
	line := fmt.Sprintf("api: %s %s %s/%s%s", action.GetVerb(), resource, action.GetNamespace(), name, detail)

	handled, obj, err := true, runtime.Object(nil), a.scripted(action.GetVerb()+" "+resource)
	if err == nil {
		err = a.precondition(action)
	}
	var gone runtime.Object // what a delete removes, for the watch
	if del, ok := action.(k8stesting.DeleteAction); ok && err == nil {
		gone, _ = a.client.Tracker().Get(action.GetResource(), action.GetNamespace(), del.GetName())
	}
	if err == nil {
		if create, ok := action.(k8stesting.CreateAction); ok {
			a.mu.Lock()
			a.created++
			n := a.created
			a.mu.Unlock()
			if pod, ok := create.GetObject().(*corev1.Pod); ok {
				pod.UID = types.UID(fmt.Sprintf("mirror-%d", n))
			}
		}
		handled, obj, err = k8stesting.ObjectReaction(a.client.Tracker())(action)
	}
	if err != nil {
		line += " → " + string(apierrors.ReasonForError(err))
	}
	a.log.add("%s", line)
	if gone != nil {
		obj = gone
	}
	if err == nil && action.GetResource() == podsResource {
		a.echo(action, obj)
	}
	return handled, obj, err
}

// echo sends what the watch shows of an accepted write. The reactor runs under the clientset's
// lock, so echoes are queued in the order of the writes.
func (a *fakeAPI) echo(action k8stesting.Action, obj runtime.Object) {
	u := sources.PodUpdate{Source: podutil.APIServerSource}
	switch action.GetVerb() {
	case "create":
		u.Op = sources.ADD
	case "patch":
		u.Op = sources.RECONCILE
	case "delete":
		u.Op = sources.REMOVE
	default:
		return
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	u.Pods = []*corev1.Pod{pod.DeepCopy()}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.lag {
		a.lagged = append(a.lagged, u)
		return
	}
	a.watch <- u
}

func (a *fakeAPI) scripted(key string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	next := a.answers[key]
	if len(next) == 0 {
		return nil
	}
	a.answers[key] = next[1:]
	return next[0]
}

// precondition answers a write whose UID precondition names another pod than the one the
// server holds, as the API server does: a delete's with Conflict, a patch's metadata.uid with
// Invalid on that field (the object tracker would apply it, changing the pod's UID).
func (a *fakeAPI) precondition(action k8stesting.Action) error {
	if patch, ok := action.(k8stesting.PatchAction); ok {
		return a.patchPrecondition(patch)
	}
	del, ok := action.(k8stesting.DeleteAction)
	if !ok || del.GetDeleteOptions().Preconditions == nil || del.GetDeleteOptions().Preconditions.UID == nil {
		return nil
	}
	obj, err := a.client.Tracker().Get(action.GetResource(), action.GetNamespace(), del.GetName())
	if err != nil {
		return nil // the tracker answers provider.NotFound
	}
	m, _ := meta.Accessor(obj)
	if want := *del.GetDeleteOptions().Preconditions.UID; m.GetUID() != want {
		return apierrors.NewConflict(corev1.Resource("pods"), del.GetName(),
			fmt.Errorf("precondition failed: UID in precondition: %s, UID in object meta: %s", want, m.GetUID()))
	}
	return nil
}

func (a *fakeAPI) patchPrecondition(patch k8stesting.PatchAction) error {
	var body struct {
		Metadata struct {
			UID types.UID `json:"uid"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(patch.GetPatch(), &body); err != nil || body.Metadata.UID == "" {
		return nil
	}
	obj, err := a.client.Tracker().Get(patch.GetResource(), patch.GetNamespace(), patch.GetName())
	if err != nil {
		return nil // the tracker answers NotFound
	}
	if m, _ := meta.Accessor(obj); m.GetUID() != body.Metadata.UID {
		return apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Pod").GroupKind(), patch.GetName(), field.ErrorList{
			field.Invalid(field.NewPath("metadata", "uid"), body.Metadata.UID, "field is immutable")})
	}
	return nil
}

// deliver is the API source's watch: it passes the echoes on until ctx is done.
func (a *fakeAPI) deliver(ctx context.Context, updates chan<- sources.PodUpdate) {
	for {
		select {
		case <-ctx.Done():
			return
		case u := <-a.watch:
			select {
			case <-ctx.Done():
				return
			case updates <- u:
			}
		}
	}
}

// eventLog is a record.EventRecorder that writes each event's type, reason and object.
type eventLog struct{ log *transcript }

func (r eventLog) Event(obj runtime.Object, typ, reason, _ string) {
	subject := "?"
	switch o := obj.(type) {
	case *corev1.ObjectReference:
		subject = strings.ToLower(o.Kind) + "/" + o.Name
	default:
		if m, err := meta.Accessor(obj); err == nil {
			subject = m.GetNamespace() + "/" + m.GetName()
		}
	}
	r.log.add("event: %s %s %s", typ, reason, subject)
}

func (r eventLog) Eventf(obj runtime.Object, typ, reason, format string, args ...any) {
	r.Event(obj, typ, reason, fmt.Sprintf(format, args...))
}

func (r eventLog) AnnotatedEventf(obj runtime.Object, _ map[string]string, typ, reason, format string, args ...any) {
	r.Event(obj, typ, reason, fmt.Sprintf(format, args...))
}

// harness is one controller run: the fakes it talks to and the transcript they write.
type harness struct {
	t        *testing.T
	log      *transcript
	clock    *clocktesting.FakeClock
	provider *fakeProvider
	api      *fakeAPI // nil when standalone
	updates  chan sources.PodUpdate
	ctrl     *node.PodController
	cancel   context.CancelFunc
}

// input is one step's cause: desc is how the transcript shows it.
type input struct {
	desc    string
	do      func(h *harness)
	advance time.Duration // the clock moves by this much (do is nil)
}

type step struct {
	in   input
	want []string
}

// transcriptCase is a controller, with what its provider runs before it starts (an agent
// restart), driven through steps.
type transcriptCase struct {
	name       string
	standalone bool // no API server: no mirrors, no status
	running    []*corev1.Pod
	steps      []step
}

// run plays c in a bubble and fails at the first step whose lines differ, showing the whole
// transcript up to there.
func (c transcriptCase) run(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	synctest.Test(t, func(t *testing.T) {
		h := c.start(t)
		defer h.stop() // also after a failed step: the bubble must empty
		if all := h.log.snapshot(); !sameLines(nil, all) {
			t.Fatalf("lines before the first input:\n\t%s", strings.Join(all, "\n\t"))
		}
		for i, s := range c.steps {
			before := len(h.log.snapshot())
			if s.in.advance > 0 {
				// The bubble is idle, so every timer the controller waits on is armed: this
				// fires exactly those due by then.
				s.in.desc = fmt.Sprintf("clock: +%s (t=%s)", s.in.advance, h.clock.Since(transcriptEpoch)+s.in.advance)
				s.in.do = func(h *harness) { h.clock.Step(s.in.advance) }
			}
			h.log.add("> %s", s.in.desc)
			s.in.do(h)
			synctest.Wait()
			all := h.log.snapshot()
			if got := all[before+1:]; !sameLines(s.want, got) {
				t.Fatalf("step %d (> %s):\nwant:\n\t%s\ngot:\n\t%s\ntranscript:\n\t%s",
					i+1, s.in.desc, lines(s.want), lines(got), strings.Join(all, "\n\t"))
			}
		}
		t.Logf("transcript:\n\t%s", strings.Join(h.log.snapshot(), "\n\t"))
	})
}

func lines(l []string) string {
	if len(l) == 0 {
		return "(nothing)"
	}
	return strings.Join(l, "\n\t")
}

func (c transcriptCase) start(t *testing.T) *harness {
	t.Helper()
	h := &harness{t: t, log: &transcript{}, clock: clocktesting.NewFakeClock(transcriptEpoch), updates: make(chan sources.PodUpdate)}
	h.provider = newFakeProvider(h.log, h.clock)
	for _, p := range c.running {
		p = p.DeepCopy()
		p.Status = runningStatus(p, h.clock.Now())
		h.provider.pods[providerKey(p.Namespace, p.Name)] = p
		h.log.add("> provider runs %s %s (the agent restarts)", providerKey(p.Namespace, p.Name), p.UID)
	}
	cfg := node.PodControllerConfig{
		NodeName:           "n1",
		Provider:           h.provider,
		Pods:               podmanager.NewBasicPodManager(),
		Updates:            h.updates,
		Recorder:           eventLog{h.log},
		Workers:            1,
		StatusWorkers:      1,
		StatusPollInterval: transcriptPollInterval,
		SyncFrequency:      transcriptSyncFrequency,
		Clock:              h.clock,
	}
	if !c.standalone {
		client := fake.NewClientset()
		h.api = &fakeAPI{log: h.log, client: client, watch: make(chan sources.PodUpdate, 100), answers: map[string][]error{}}
		client.PrependReactor("*", "*", h.api.react)
		n1 := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "n1-uid"}}
		nodes := mirror.NodeGetterFunc(func(string) (*corev1.Node, error) { return n1, nil })
		cfg.Client, cfg.Node = kubeclienttest.Wrap(client), nodes
		cfg.Mirrors = mirror.NewBasicMirrorClient(kubeclienttest.Wrap(client), "n1", nodes)
	}
	var err error
	if h.ctrl, err = node.NewPodController(cfg); err != nil {
		t.Fatal(err)
	}
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	h.cancel = cancel
	go func() { _ = h.ctrl.Run(ctx) }()
	if h.api != nil {
		go h.api.deliver(ctx, h.updates)
	}
	<-h.ctrl.Ready()
	synctest.Wait() // adoption's syncs are done
	return h
}

// stop cancels the controller and, unless a step failed, checks that it did nothing more on
// the way out.
func (h *harness) stop() {
	before := len(h.log.snapshot())
	h.cancel()
	<-h.ctrl.Done()
	if all := h.log.snapshot(); len(all) > before && !h.t.Failed() {
		h.t.Errorf("lines after the last step:\n\t%s", strings.Join(all[before:], "\n\t"))
	}
}

func (h *harness) send(u sources.PodUpdate) {
	h.updates <- u // the controller's consumer takes it, or the bubble deadlocks and says so
}

// Inputs.

func describe(op sources.Op, source string, pods []*corev1.Pod, seen bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", source, op)
	for i, p := range pods {
		sep := " "
		if i > 0 {
			sep = ", "
		}
		fmt.Fprintf(&b, "%s%s/%s (%s", sep, p.Namespace, p.Name, p.UID)
		if p.DeletionTimestamp != nil {
			fmt.Fprintf(&b, ", grace %ds", ptrValue(p.DeletionGracePeriodSeconds))
		}
		b.WriteString(")")
	}
	if seen {
		b.WriteString(" — source seen")
	}
	return b.String()
}

// file delivers an update of the file source.
func file(op sources.Op, seen bool, pods ...*corev1.Pod) input {
	return input{desc: describe(op, podutil.FileSource, pods, seen), do: func(h *harness) {
		h.send(sources.PodUpdate{Op: op, Source: podutil.FileSource, Pods: pods, SourceSeen: seen})
	}}
}

// api is a change someone else made in the API server, delivered by the API source's watch:
// the fake API server holds the same, with the status it holds for the pod.
func api(op sources.Op, seen bool, pods ...*corev1.Pod) input {
	return input{desc: describe(op, podutil.APIServerSource, pods, seen), do: func(h *harness) {
		tracker := h.api.client.Tracker()
		watched := make([]*corev1.Pod, len(pods))
		for i, p := range pods {
			p = p.DeepCopy()
			watched[i] = p
			held, err := tracker.Get(podsResource, p.Namespace, p.Name)
			switch {
			case op == sources.REMOVE:
				if err == nil {
					err = tracker.Delete(podsResource, p.Namespace, p.Name)
				}
				if apierrors.IsNotFound(err) {
					err = nil
				}
			case apierrors.IsNotFound(err):
				err = tracker.Add(p)
			case err == nil:
				p.Status = held.(*corev1.Pod).Status
				err = tracker.Update(podsResource, p, p.Namespace)
			}
			if err != nil {
				h.t.Fatalf("fake API server: %v", err)
			}
		}
		h.send(sources.PodUpdate{Op: op, Source: podutil.APIServerSource, Pods: watched, SourceSeen: seen})
	}}
}

// apiServerReplaces makes the API server hold p (another UID under the same name) before the
// watch shows it: someone deleted and re-created the pod.
func apiServerReplaces(p *corev1.Pod) input {
	return input{desc: fmt.Sprintf("api server: %s/%s is now %s (not yet watched)", p.Namespace, p.Name, p.UID), do: func(h *harness) {
		if err := h.api.client.Tracker().Update(podsResource, p, p.Namespace); err != nil {
			h.t.Fatal(err)
		}
	}}
}

// apiAnswers scripts the API server's next answers to verb on resource (e.g. "create", "pods").
func apiAnswers(verb, resource string, errs ...error) input {
	reasons := make([]string, len(errs))
	for i, err := range errs {
		reasons[i] = string(apierrors.ReasonForError(err))
	}
	return input{desc: fmt.Sprintf("api server: answers the next %s %s with %s", verb, resource, strings.Join(reasons, ", ")), do: func(h *harness) {
		h.api.mu.Lock()
		defer h.api.mu.Unlock()
		key := verb + " " + resource
		h.api.answers[key] = append(h.api.answers[key], errs...)
	}}
}

// providerRefuses makes the provider refuse uid as invalid input, for why; an empty why accepts
// it again.
func providerRefuses(uid types.UID, why string) input {
	desc := fmt.Sprintf("provider: refuses %s (%s)", uid, why)
	if why == "" {
		desc = fmt.Sprintf("provider: accepts %s", uid)
	}
	return input{desc: desc, do: func(h *harness) {
		h.provider.mu.Lock()
		defer h.provider.mu.Unlock()
		if why == "" {
			delete(h.provider.refuse, uid)
		} else {
			h.provider.refuse[uid] = why
		}
	}}
}

// providerSlow makes the provider keep uid running after DeletePod, until providerStops.
func providerSlow(uid types.UID) input {
	return input{desc: fmt.Sprintf("provider: slow to stop %s", uid), do: func(h *harness) {
		h.provider.mu.Lock()
		defer h.provider.mu.Unlock()
		h.provider.slow[uid] = true
	}}
}

// providerStops: the containers of uid end; the provider reports it terminal from now on.
func providerStops(uid types.UID) input {
	return input{desc: fmt.Sprintf("provider: %s has stopped", uid), do: func(h *harness) { h.provider.stop(uid) }}
}

// watchLags holds back (on) or delivers, in order, what the watch shows of accepted writes.
func watchLags(on bool) input {
	desc := "api server: the watch lags"
	if !on {
		desc = "api server: the watch catches up"
	}
	return input{desc: desc, do: func(h *harness) {
		h.api.mu.Lock()
		defer h.api.mu.Unlock()
		h.api.lag = on
		if !on {
			for _, u := range h.api.lagged {
				h.api.watch <- u
			}
			h.api.lagged = nil
		}
	}}
}

// advance moves the fake clock by d.
func advance(d time.Duration) input { return input{advance: d} }

// Pods.

// apiPod is a pod bound to n1 through the API server.
func apiPod(name string, uid types.UID) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: uid},
		Spec: corev1.PodSpec{
			NodeName:   "n1",
			Containers: []corev1.Container{{Name: "c", Image: "img:1"}},
		},
	}
}

// deleting is pod after a graceful API deletion with grace seconds.
func deleting(pod *corev1.Pod, grace int64) *corev1.Pod {
	p := pod.DeepCopy()
	ts := metav1.NewTime(transcriptEpoch)
	p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &ts, &grace
	return p
}

// withGrace is pod with terminationGracePeriodSeconds grace.
func withGrace(pod *corev1.Pod, grace int64) *corev1.Pod {
	p := pod.DeepCopy()
	p.Spec.TerminationGracePeriodSeconds = &grace
	return p
}
