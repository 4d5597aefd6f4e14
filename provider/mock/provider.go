package mock

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vk-static/vk-static/podstatus"
	"github.com/vk-static/vk-static/podutil"
	"github.com/vk-static/vk-static/provider"
)

// Provider simulates pods. It is safe for concurrent use; create it with New.
type Provider struct {
	cfg Config

	mu sync.Mutex
	// pods holds every pod the provider runs, by name and namespace.
	pods  map[podKey]*podEntry
	calls map[types.UID]*Calls // only with Config.RecordCalls
	// createAttempts counts the CreatePod calls of each UID whose pod fails only its first N
	// (create-error-times). The behaviour needs it whatever RecordCalls says; it holds only
	// such UIDs.
	createAttempts map[types.UID]int
	bg             background // notification queue and delayed transitions, guarded by mu

	NodeProvider // Ping and the node's status reports

	started time.Time // the node's start time in GetStatsSummary

	hostIPs []corev1.HostIP // every pod's, shared read-only (addresses)
	podIPs  []corev1.PodIP
	// baseStatus is a status with only the addresses: the rest of every record's status
	// (recordStatus), shared read-only.
	baseStatus *corev1.PodStatus

	lastImage, lastImageID string // imageIDLocked's, guarded by mu
	// lastStarted is startedConditionsLocked's, guarded by mu.
	lastStarted []corev1.PodCondition
}

// podKey is a pod's namespace and name, the key of the provider's maps: the pod's own strings,
// where podutil.FullName makes one more string for each pod (about 48 B a pod at api-1k, for
// 16 B more in each map slot).
type podKey struct{ namespace, name string }

func keyOf(pod *corev1.Pod) podKey { return podKey{namespace: pod.Namespace, name: pod.Name} }

// String is the pod's full name, for messages.
func (k podKey) String() string { return podutil.BuildFullName(k.name, k.namespace) }

// podEntry is one pod the provider runs.
type podEntry struct {
	rec *podRecord // never modified: a change stores a new one ([recordOf])
	// behaviour is shared by every pod that asks for none (noBehaviour): most pods, and the
	// struct is ~100 B.
	behaviour   *behaviour
	terminating bool
	logs        []containerLog // one per container; written by recordLocked
}

var (
	_ provider.PodLifecycleHandler = (*Provider)(nil)
	_ provider.PodNotifier         = (*Provider)(nil)
	_ provider.NodeProvider        = (*Provider)(nil)
)

// New returns a provider for the node cfg describes.
func New(cfg Config) (*Provider, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	size := int(cfg.Pods.Value())
	p := &Provider{
		cfg:     cfg,
		pods:    make(map[podKey]*podEntry, size),
		bg:      newBackground(),
		started: cfg.Clock.Now(),
		hostIPs: []corev1.HostIP{{IP: cfg.InternalIP}},
		podIPs:  []corev1.PodIP{{IP: cfg.PodIP}},
	}
	p.baseStatus = &corev1.PodStatus{}
	p.addresses(p.baseStatus)
	if cfg.RecordCalls {
		p.calls = make(map[types.UID]*Calls, size)
	}
	return p, nil
}

func (p *Provider) now() metav1.Time { return metav1.NewTime(p.cfg.Clock.Now()) }

// storeLocked makes pod (read-only from now on) the current state of its entry, logs what
// changed at now, and queues its notification. The entry keeps a record of it, not the pod;
// from is recordOf's (the entry's record when pod's containers are copied from it).
func (p *Provider) storeLocked(key podKey, e *podEntry, pod *corev1.Pod, now time.Time, from *podRecord) {
	e.recordLocked(e.rec, pod, now)
	e.rec = recordOf(pod, from, p.baseStatus)
	p.bg.notifyLocked(key, pod)
}

// CreatePod starts pod: Running at once, or Pending for its create-delay.
func (p *Provider) CreatePod(ctx context.Context, pod *corev1.Pod) error {
	key := keyOf(pod)
	b, err := parseBehaviour(pod)
	if err != nil {
		return provider.InvalidInput("mock: pod %s: %v", key, err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if c := p.countLocked(pod.UID); c != nil {
		c.Create++
	}
	attempt := 0 // of this UID, counted only for create-error-times
	if b.createError != "" && b.createErrorTimes > 0 {
		if p.createAttempts == nil {
			p.createAttempts = make(map[types.UID]int)
		}
		p.createAttempts[pod.UID]++
		attempt = p.createAttempts[pod.UID]
	}
	if b.createInvalid != "" {
		return provider.InvalidInput("mock: pod %s: %s", key, b.createInvalid)
	}
	if b.createError != "" && (b.createErrorTimes == 0 || attempt <= b.createErrorTimes) {
		return fmt.Errorf("mock: create pod %s: %s", key, b.createError)
	}
	if old, ok := p.pods[key]; ok {
		if old.rec.uid == pod.UID {
			return nil // already running: creating again changes nothing
		}
		if !old.rec.status.terminal() {
			// The caller must let the old pod terminate first (an edited static pod).
			return fmt.Errorf("mock: create pod %s (UID %s): the name is still used by UID %s", key, pod.UID, old.rec.uid)
		}
	}

	// The pod is the provider's to keep (provider.PodLifecycleHandler): no copy, only what the
	// simulator reads of it (its record shares the pod's slices and maps).
	stored := pod
	keep(stored)
	if stored.Spec.NodeName == "" {
		stored.Spec.NodeName = p.cfg.NodeName
	}
	now := p.now()
	e := &podEntry{behaviour: &noBehaviour}
	if b != noBehaviour {
		e.behaviour = &b
	}
	p.pods[key] = e
	if b.createDelay > 0 {
		stored.Status = p.pendingStatus(stored, now)
		p.bg.scheduleLocked(now.Add(b.createDelay), key, pod.UID, becomeRunning)
	} else {
		stored.Status = p.runningStatus(stored, nil, now)
		p.scheduleFinishLocked(key, e, stored, now.Time)
	}
	p.storeLocked(key, e, stored, now.Time, nil)
	return nil
}

// scheduleFinishLocked schedules the end of a pod that finishes on its own.
func (p *Provider) scheduleFinishLocked(key podKey, e *podEntry, pod *corev1.Pod, now time.Time) {
	if e.behaviour.finishesOnItsOwn(pod) {
		p.bg.scheduleLocked(now.Add(e.behaviour.runDuration), key, pod.UID, finish)
	}
}

// UpdatePod applies a spec change; a container whose image changed restarts with it.
func (p *Provider) UpdatePod(ctx context.Context, pod *corev1.Pod) error {
	key := keyOf(pod)
	// The pod is the provider's to keep, as CreatePod's: its spec and annotations are kept, not
	// copied, trimmed to what the simulator reads.
	spec, annotations := keptSpec(&pod.Spec), keptAnnotations(pod.Annotations)

	p.mu.Lock()
	defer p.mu.Unlock()
	if c := p.countLocked(pod.UID); c != nil {
		c.Update++
	}
	e, ok := p.pods[key]
	if !ok || (pod.UID != "" && e.rec.uid != pod.UID) {
		return provider.NotFound("mock: pod %s (UID %s)", key, pod.UID)
	}
	if e.terminating || e.rec.status.terminal() {
		return nil // nothing left to update
	}
	updated := e.rec.copyPod()
	updated.Spec, updated.Annotations = spec, annotations
	if updated.Spec.NodeName == "" {
		updated.Spec.NodeName = p.cfg.NodeName
	}
	now := p.now()
	images := make(map[string]string, len(spec.Containers))
	for _, c := range spec.Containers {
		images[c.Name] = c.Image
	}
	for i := range updated.Status.ContainerStatuses {
		cs := &updated.Status.ContainerStatuses[i]
		image, ok := images[cs.Name]
		if !ok || image == cs.Image {
			continue
		}
		cs.Image, cs.RestartCount = image, cs.RestartCount+1
		if cs.State.Running != nil {
			cs.ImageID = p.imageIDLocked(image)
			cs.State.Running = &corev1.ContainerStateRunning{StartedAt: now}
		}
	}
	p.storeLocked(key, e, updated, now.Time, nil) // the spec changed
	return nil
}

// DeletePod stops pod: at once, or after its delete-delay (capped at its grace period). The
// terminal status is delivered through NotifyPods and the pod is forgotten.
func (p *Provider) DeletePod(ctx context.Context, pod *corev1.Pod) error {
	key := keyOf(pod)

	p.mu.Lock()
	defer p.mu.Unlock()
	if c := p.countLocked(pod.UID); c != nil {
		c.Delete++
	}
	e, ok := p.pods[key]
	if !ok || (pod.UID != "" && e.rec.uid != pod.UID) {
		return provider.NotFound("mock: pod %s (UID %s)", key, pod.UID)
	}
	if e.behaviour.deleteError != "" {
		return fmt.Errorf("mock: delete pod %s: %s", key, e.behaviour.deleteError)
	}
	if e.terminating {
		return nil // already stopping
	}
	e.terminating = true
	now := p.now()
	stopping := e.rec.copyPod()
	if pod.DeletionTimestamp != nil {
		stopping.DeletionTimestamp = pod.DeletionTimestamp.DeepCopy()
	} else {
		stopping.DeletionTimestamp = &now
	}
	if pod.DeletionGracePeriodSeconds != nil {
		grace := *pod.DeletionGracePeriodSeconds
		stopping.DeletionGracePeriodSeconds = &grace
	}
	if delay := e.behaviour.shutdownDelay(stopping); delay > 0 && !podstatus.IsTerminal(&stopping.Status) {
		p.storeLocked(key, e, stopping, now.Time, e.rec)
		p.bg.scheduleLocked(now.Add(delay), key, stopping.UID, terminate)
		return nil
	}
	e.recordLocked(e.rec, stopping, now.Time) // the stopping line, before the stopped one
	e.rec = recordOf(stopping, e.rec, p.baseStatus)
	p.terminateLocked(key, e, now)
	return nil
}

// terminateLocked ends a deleted pod's containers, reports it and forgets it.
func (p *Provider) terminateLocked(key podKey, e *podEntry, now metav1.Time) {
	done := e.rec.copyPod()
	if !podstatus.IsTerminal(&done.Status) {
		done.Status = terminatedStatus(done.Status, e.behaviour.exitCode, now)
	}
	e.recordLocked(e.rec, done, now.Time) // a reader or an exec holding the entry sees the end
	delete(p.pods, key)
	p.bg.notifyLocked(key, done)
}

// GetPod returns a copy of the pod as the provider runs it.
func (p *Provider) GetPod(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	rec, err := p.record(namespace, name)
	if err != nil {
		return nil, err
	}
	return rec.copyPod(), nil
}

// GetPodStatus returns a copy of the pod's current status.
func (p *Provider) GetPodStatus(ctx context.Context, namespace, name string) (*corev1.PodStatus, error) {
	rec, err := p.record(namespace, name)
	if err != nil {
		return nil, err
	}
	st := rec.status.full()
	return st.DeepCopy(), nil
}

// record is the pod's current record, immutable: the caller copies from it outside the lock.
func (p *Provider) record(namespace, name string) (*podRecord, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e, ok := p.pods[podKey{namespace: namespace, name: name}]
	if !ok {
		return nil, provider.NotFound("mock: pod %s/%s", namespace, name)
	}
	return e.rec, nil
}

// GetPods returns a copy of every pod the provider runs, including finished ones not yet deleted.
func (p *Provider) GetPods(ctx context.Context) ([]*corev1.Pod, error) {
	p.mu.Lock()
	recs := make([]*podRecord, 0, len(p.pods))
	for _, e := range p.pods {
		recs = append(recs, e.rec)
	}
	p.mu.Unlock()
	pods := make([]*corev1.Pod, len(recs))
	for i, rec := range recs {
		pods[i] = rec.copyPod()
	}
	return pods, nil
}

// Len is the number of pods the provider runs (finished pods included until deleted).
func (p *Provider) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.pods)
}
