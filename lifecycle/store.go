package lifecycle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/internal/atomicfile"
	"github.com/vk-static/vk-static/podutil"
)

// podFile is the pod as the lifecycle was given it, kept in RootDir/pods/<uid>/pod.json so
// that a restarted agent knows which pods its containers belong to (GetPods), with the
// annotations the pod controller needs to adopt them.
const podFile = "pod.json"

type savedPod struct {
	Pod           *corev1.Pod `json:"pod"`
	StartTime     time.Time   `json:"startTime"`
	Refused       string      `json:"refused,omitempty"`
	RefusedReason string      `json:"refusedReason,omitempty"`
	// Deleting is set once DeletePod was called, with the deletion's Grace: a restarted agent
	// goes on stopping and cleaning up the pod rather than starting it again.
	Deleting bool          `json:"deleting,omitempty"`
	Grace    time.Duration `json:"grace,omitempty"`
	// Evicted is the eviction message of an evicted pod, with its grace and its reason
	// (Evicted when empty, or Preempting): a restarted agent keeps it Failed and stopped.
	Evicted       string        `json:"evicted,omitempty"`
	EvictGrace    time.Duration `json:"evictGrace,omitempty"`
	EvictedReason string        `json:"evictedReason,omitempty"`
	// Allocated and Actuated are the containers' resources as the node admitted them and as
	// their current instances run with them ([Provider.allocateResizeLocked]): a restarted agent neither forgets an
	// allocated resize nor takes one for applied that was not.
	Allocated map[string]corev1.ResourceRequirements `json:"allocated,omitempty"`
	Actuated  map[string]corev1.ResourceRequirements `json:"actuated,omitempty"`
	// Resizing is the generation of a resize in progress (0: none): its containers' instances
	// whose resources were not recorded are then given them again.
	Resizing int64 `json:"resizing,omitempty"`
}

// savePod writes the pod's file atomically and durably (atomicfile: a synced temporary file
// renamed over it, the directory synced): after a crash or a power loss a restarted agent finds
// the old record or the new one, never an empty one. Called with p.mu held.
func (p *Provider) savePod(st *podState) error {
	rec, err := p.encodePodLocked(st)
	if err != nil {
		return err
	}
	return rec.write()
}

// podFileWrites orders the writes of one pod's file. A record is encoded under p.mu, so it is the
// pod's state at one moment, and may be written after p.mu is released (CreatePod: the syncs
// then do not hold every other pod's call back); a record is never written over a newer one.
type podFileWrites struct {
	encoded uint64     // the last record's number; guarded by p.mu
	mu      sync.Mutex // held while writing, never while taking p.mu
	written uint64     // the number of the record on disk; guarded by mu
}

// podRecord is one encoded record of a pod, to be written by write.
type podRecord struct {
	file *podFileWrites
	seq  uint64
	dir  string
	data []byte
}

// encodePodLocked encodes the pod's record as it is now.
func (p *Provider) encodePodLocked(st *podState) (*podRecord, error) {
	pod := st.pod.DeepCopy()
	pod.Status = corev1.PodStatus{}
	data, err := json.Marshal(savedPod{Pod: pod, StartTime: st.startTime, Refused: st.refused, RefusedReason: st.refusedReason, Deleting: st.deleting, Grace: st.grace,
		Evicted: st.evicted, EvictGrace: st.evictGrace, EvictedReason: st.evictedReason,
		Allocated: st.resize.allocated, Actuated: st.resize.actuated, Resizing: st.resize.resizing()})
	if err != nil {
		return nil, err
	}
	f := p.podFiles[pod.UID]
	if f == nil {
		f = &podFileWrites{}
		p.podFiles[pod.UID] = f
	}
	f.encoded++
	return &podRecord{file: f, seq: f.encoded, dir: filepath.Join(p.cfg.podsDir(), string(pod.UID)), data: data}, nil
}

// write puts the record on disk unless a newer one of the pod already is.
func (r *podRecord) write() error {
	r.file.mu.Lock()
	defer r.file.mu.Unlock()
	if r.file.written >= r.seq {
		return nil
	}
	if err := os.MkdirAll(r.dir, 0o750); err != nil {
		return err
	}
	// The new directory's own entry in the pods directory must reach the disk too.
	if err := atomicfile.SyncDir(filepath.Dir(r.dir)); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(r.dir, podFile), r.data, 0o600); err != nil {
		return err
	}
	r.file.written = r.seq
	return nil
}

// readSavedPod reads the record in the pod directory named uid; an error says why it cannot be
// used (missing, empty, corrupt, another pod's).
func (p *Provider) readSavedPod(uid string) (*savedPod, error) {
	path := filepath.Join(p.cfg.podsDir(), uid, podFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var saved savedPod
	if err := json.Unmarshal(data, &saved); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if saved.Pod == nil || string(saved.Pod.UID) != uid {
		return nil, fmt.Errorf("%s: not the record of pod %s", path, uid)
	}
	return &saved, nil
}

// restore reads the pods a previous agent kept and attaches the containers and sandboxes the
// runtime still holds to them: running containers keep running, with their restart counts
// (their attempts) and start times; the newest two instances of each container are kept
// (current and previous), older ones removed. Containers and sandboxes of no known pod are
// stopped and removed: nothing would ever report on them. A pod directory whose record cannot
// be read (a crash mid-write on a file system that lost it, a corrupt file) is not "no pod":
// its containers and sandboxes are kept as they are, reported ([keptPod]), until the pod
// is created again.
func (p *Provider) restore(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	entries, err := os.ReadDir(p.cfg.podsDir())
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("lifecycle: read %s: %w", p.cfg.podsDir(), err)
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		saved, err := p.readSavedPod(e.Name())
		if err != nil {
			p.kept[types.UID(e.Name())] = &keptPod{err: err}
			continue
		}
		st := &podState{
			pod: saved.Pod, startTime: saved.StartTime, refused: saved.Refused, refusedReason: saved.RefusedReason,
			deleting: saved.Deleting, grace: saved.Grace, evicted: saved.Evicted, evictGrace: saved.EvictGrace, evictedReason: saved.EvictedReason,
			containers: map[string]*containerRecord{}, waiting: map[string]waitingReason{},
			resize: restoredResize(saved, metaNow(p.cfg.Clock)),
		}
		rerunAfterShutdown(st)
		p.pods[saved.Pod.UID] = st
		p.byName[podutil.FullName(saved.Pod)] = saved.Pod.UID
	}

	sandboxes, err := p.rt.ListSandboxes(ctx)
	if err != nil {
		return fmt.Errorf("lifecycle: list the runtime's sandboxes: %w", err)
	}
	// A known pod's sandboxes that are not ready — stopped with the agent, or whose holder a
	// reboot ended — run nothing more, but their exited containers are the pod's history: its
	// restart counts and last states, as the kubelet reads them from the runtime after a reboot.
	// They are kept for the containers below, then removed; the pod gets a new sandbox.
	var dead []*SandboxStatus
	for _, sb := range sandboxes {
		if k, ok := p.kept[types.UID(sb.Labels[LabelPodUID])]; ok {
			k.sandboxes = append(k.sandboxes, sb)
			continue
		}
		st, ok := p.pods[types.UID(sb.Labels[LabelPodUID])]
		if ok && adoptSandbox(st, sb) {
			continue
		}
		if ok && sb.State == SandboxNotReady {
			dead = append(dead, sb)
			continue
		}
		logger.Info("Removing a sandbox of no pod", "sandboxID", sb.ID, "podUID", sb.Labels[LabelPodUID])
		p.removeSandbox(ctx, sb.ID)
	}
	deadSandbox := map[string]bool{}
	for _, sb := range dead {
		// A pod with a ready sandbox has its history there.
		if p.pods[types.UID(sb.Labels[LabelPodUID])].sandboxID == "" {
			deadSandbox[sb.ID] = true
		}
	}

	containers, err := p.rt.ListContainers(ctx)
	if err != nil {
		return fmt.Errorf("lifecycle: list the runtime's containers: %w", err)
	}
	// Newest first, so that the first instance seen of a container is its current one.
	slices.SortFunc(containers, func(a, b *ContainerStatus) int { return int(b.Attempt) - int(a.Attempt) })
	for _, cs := range containers {
		if k, ok := p.kept[types.UID(cs.Labels[LabelPodUID])]; ok {
			k.containers = append(k.containers, cs)
			continue
		}
		st, ok := p.pods[types.UID(cs.Labels[LabelPodUID])]
		name := cs.Labels[LabelContainerName]
		history := ok && deadSandbox[cs.SandboxID] && cs.State == ContainerExited
		if !ok || containerSpec(st.pod, name) == nil || (cs.SandboxID != st.sandboxID && !history) {
			logger.Info("Removing a container of no pod", "containerID", cs.ID, "podUID", cs.Labels[LabelPodUID], "container", name)
			p.removeOrphanContainer(ctx, cs)
			continue
		}
		rec := st.containers[name]
		if rec == nil || rec.previous == nil {
			p.addTerminationMessage(ctx, st.pod, name, cs)
		}
		if !adoptContainer(st, cs, history) {
			p.removeOrphanContainer(ctx, cs)
		}
	}
	for _, sb := range dead {
		logger.Info("Removing a pod's sandbox that is not ready; the pod gets a new one", "sandboxID", sb.ID, "podUID", sb.Labels[LabelPodUID])
		p.removeSandbox(ctx, sb.ID)
	}
	for uid, st := range p.pods {
		settleAdopted(st)
		logger.V(2).Info("Restored a pod", "pod", klog.KObj(st.pod), "podUID", uid, "containers", len(st.containers))
	}
	for uid, k := range p.kept {
		if len(k.containers) == 0 && len(k.sandboxes) == 0 {
			// Nothing to keep: the directory a forgotten pod's cleanup left part of, or a pod
			// that never got a sandbox.
			logger.Info("Skipping a pod directory without a readable record; the runtime has nothing of it", "podUID", uid, "err", k.err)
			delete(p.kept, uid)
			continue
		}
		klog.FromContext(ctx).Error(k.err, "A pod's record cannot be read: its containers and sandboxes are kept, untouched, until the pod is created again",
			"podUID", uid, "containers", len(k.containers), "sandboxes", len(k.sandboxes))
	}
	return nil
}

// adoptSandbox makes sb the pod's sandbox if it has none and sb is ready; false: sb is of no
// use to the pod.
func adoptSandbox(st *podState, sb *SandboxStatus) bool {
	if st.sandboxID != "" || sb.State != SandboxReady {
		return false
	}
	st.sandboxID, st.podIPs = sb.ID, sb.IPs
	return true
}

// adoptContainer attaches an instance the runtime holds to the pod's container record; the
// instances of a container come newest first, so the first is its current one and the second
// its previous. history: cs is an exited instance of a sandbox of the pod that is no longer
// ready, which counts for the restarts and the last state only. false: the instance is of no
// use to the pod (not in its spec, of another sandbox, older than the two kept).
func adoptContainer(st *podState, cs *ContainerStatus, history bool) bool {
	name := cs.Labels[LabelContainerName]
	if containerSpec(st.pod, name) == nil || (cs.SandboxID != st.sandboxID && !history) {
		return false
	}
	rec := st.containers[name]
	switch {
	case rec == nil:
		rec = &containerRecord{current: cs, restarts: int32(cs.Attempt), exited: make(chan struct{})}
		rec.everStarted = !cs.StartedAt.IsZero()
		rec.started = cs.State == ContainerRunning // probes decide again (restore's target)
		rec.ready = false
		if cs.State == ContainerExited {
			rec.closeExited()
		}
		st.containers[name] = rec
	case rec.previous == nil:
		rec.previous = cs
	default:
		return false
	}
	return true
}

// settleAdopted sets whether the adopted running containers count as started and ready until
// their probes say: at once for a container without the probe.
func settleAdopted(st *podState) {
	for name, rec := range st.containers {
		if rec.running() {
			c := containerSpec(st.pod, name)
			rec.started = c.StartupProbe == nil
			rec.ready = rec.started && c.ReadinessProbe == nil
		}
	}
}

// removeOrphanContainer removes a container of no pod; a failure is logged, and the next
// agent's restore finds it again.
func (p *Provider) removeOrphanContainer(ctx context.Context, cs *ContainerStatus) {
	if err := p.removeInstance(ctx, cs); err != nil {
		klog.FromContext(ctx).Error(err, "Removing a container of no pod", "containerID", cs.ID)
	}
}

// removeSandbox removes a sandbox of no pod; a failure is logged, and the next agent's restore
// finds it again.
func (p *Provider) removeSandbox(ctx context.Context, id string) {
	if err := p.dropSandbox(ctx, id); err != nil {
		klog.FromContext(ctx).Error(err, "Removing a sandbox of no pod", "sandboxID", id)
	}
}
