package lifecycle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/node"
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
}

// savePod writes the pod's file atomically (a temporary file renamed over it).
func (p *Provider) savePod(st *podState) error {
	dir := filepath.Join(p.cfg.podsDir(), string(st.pod.UID))
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	pod := st.pod.DeepCopy()
	pod.Status = corev1.PodStatus{}
	data, err := json.Marshal(savedPod{Pod: pod, StartTime: st.startTime, Refused: st.refused, RefusedReason: st.refusedReason})
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".pod-*.json")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, podFile))
}

// restore reads the pods a previous agent kept and attaches the containers and sandboxes the
// runtime still holds to them: running containers keep running, with their restart counts
// (their attempts) and start times; the newest two instances of each container are kept
// (current and previous), older ones removed. Containers and sandboxes of no known pod are
// stopped and removed: nothing would ever report on them.
func (p *Provider) restore(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	entries, err := os.ReadDir(p.cfg.podsDir())
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("lifecycle: read %s: %w", p.cfg.podsDir(), err)
	}
	for _, e := range entries {
		path := filepath.Join(p.cfg.podsDir(), e.Name(), podFile)
		data, err := os.ReadFile(path)
		if err != nil {
			logger.Info("Skipping a pod directory without its pod", "path", path, "err", err)
			continue
		}
		var saved savedPod
		if err := json.Unmarshal(data, &saved); err != nil || saved.Pod == nil || string(saved.Pod.UID) != e.Name() {
			logger.Info("Skipping an unreadable pod file", "path", path, "err", err)
			continue
		}
		st := &podState{
			pod: saved.Pod, startTime: saved.StartTime, refused: saved.Refused, refusedReason: saved.RefusedReason,
			containers: map[string]*containerRecord{}, waiting: map[string]waitingReason{},
		}
		p.pods[saved.Pod.UID] = st
		p.byName[podKey(saved.Pod.Namespace, saved.Pod.Name)] = saved.Pod.UID
	}

	sandboxes, err := p.rt.ListSandboxes(ctx)
	if err != nil {
		return fmt.Errorf("lifecycle: list the runtime's sandboxes: %w", err)
	}
	for _, sb := range sandboxes {
		st, ok := p.pods[types.UID(sb.Labels[LabelPodUID])]
		if ok && st.sandboxID == "" && sb.State == SandboxReady {
			st.sandboxID, st.podIPs = sb.ID, sb.IPs
			continue
		}
		logger.Info("Removing a sandbox of no pod", "sandboxID", sb.ID, "podUID", sb.Labels[LabelPodUID])
		p.removeSandbox(ctx, sb.ID)
	}

	containers, err := p.rt.ListContainers(ctx)
	if err != nil {
		return fmt.Errorf("lifecycle: list the runtime's containers: %w", err)
	}
	// Newest first, so that the first instance seen of a container is its current one.
	slices.SortFunc(containers, func(a, b *ContainerStatus) int { return int(b.Attempt) - int(a.Attempt) })
	for _, cs := range containers {
		st, ok := p.pods[types.UID(cs.Labels[LabelPodUID])]
		name := cs.Labels[LabelContainerName]
		if !ok || containerSpec(st.pod, name) == nil || cs.SandboxID != st.sandboxID {
			logger.Info("Removing a container of no pod", "containerID", cs.ID, "podUID", cs.Labels[LabelPodUID], "container", name)
			p.removeContainer(ctx, cs)
			continue
		}
		rec := st.containers[name]
		if rec == nil || rec.previous == nil {
			p.addTerminationMessage(ctx, st.pod, name, cs)
		}
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
			p.removeContainer(ctx, cs)
		}
	}
	for uid, st := range p.pods {
		for name, rec := range st.containers {
			if rec.running() {
				c := containerSpec(st.pod, name)
				rec.started = c.StartupProbe == nil
				rec.ready = rec.started && c.ReadinessProbe == nil
			}
		}
		logger.V(2).Info("Restored a pod", "pod", klog.KObj(st.pod), "podUID", uid, "containers", len(st.containers))
	}
	return nil
}

// probeRestoredLocked starts the probes of the running containers restore found; Run calls it,
// so that they run with Run's context.
func (p *Provider) probeRestoredLocked(ctx context.Context) {
	for uid, st := range p.pods {
		for name, rec := range st.containers {
			if rec.running() && rec.exited != nil {
				c := containerSpec(st.pod, name)
				p.probes.Add(ctx, uid, c, rec.current.ID, rec.current.StartedAt, p.targetLocked(st, c, rec.current.ID))
			}
		}
	}
}

func (p *Provider) removeContainer(ctx context.Context, cs *ContainerStatus) {
	if cs.State == ContainerRunning {
		if err := p.rt.StopContainer(ctx, cs.ID, minimumGrace); err != nil && !node.IsNotFound(err) {
			klog.FromContext(ctx).Error(err, "Stopping a container of no pod", "containerID", cs.ID)
		}
	}
	if err := p.rt.RemoveContainer(ctx, cs.ID); err != nil && !node.IsNotFound(err) {
		klog.FromContext(ctx).Error(err, "Removing a container of no pod", "containerID", cs.ID)
	}
}

func (p *Provider) removeSandbox(ctx context.Context, id string) {
	if err := p.rt.StopSandbox(ctx, id); err != nil && !node.IsNotFound(err) {
		klog.FromContext(ctx).Error(err, "Stopping a sandbox of no pod", "sandboxID", id)
	}
	if err := p.rt.RemoveSandbox(ctx, id); err != nil && !node.IsNotFound(err) {
		klog.FromContext(ctx).Error(err, "Removing a sandbox of no pod", "sandboxID", id)
	}
}
