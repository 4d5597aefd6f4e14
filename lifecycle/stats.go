package lifecycle

import (
	"context"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// GetStatsSummary measures every running container through the runtime and sums them per pod;
// CPU rates come from the previous call's samples (the first call reports none, as cAdvisor's
// first sample does). The node's figures come from Config.NodeStats. Pressure stall
// information (PSI) is the runtime's, where it has it: a container's in its CPU, memory and IO
// stats, and a pod's, from a SandboxStatsReader, in the pod's — never summed from its
// containers, as the kubelet does not. Without it those fields are left out, IO altogether.
func (p *Provider) GetStatsSummary(ctx context.Context) (*statsv1alpha1.Summary, error) {
	type running struct {
		uid              types.UID
		namespace, name  string
		startTime        time.Time
		sandboxID        string
		container, id    string
		containerStarted time.Time
	}
	p.mu.Lock()
	var all []running
	for uid, st := range p.pods {
		for name, rec := range st.containers {
			if rec.running() {
				all = append(all, running{uid: uid, namespace: st.pod.Namespace, name: st.pod.Name, startTime: st.startTime,
					sandboxID: st.sandboxID, container: name, id: rec.current.ID, containerStarted: rec.current.StartedAt})
			}
		}
	}
	p.mu.Unlock()

	summary := &statsv1alpha1.Summary{}
	if p.cfg.NodeStats != nil {
		ns, err := p.cfg.NodeStats()
		if err != nil {
			return nil, err
		}
		summary.Node = *ns
	}
	pods := map[types.UID]*statsv1alpha1.PodStats{}
	var order []types.UID
	sandboxes := map[types.UID]string{}
	for _, r := range all {
		s, err := p.rt.ContainerStats(ctx, r.id)
		if err != nil {
			klog.FromContext(ctx).V(4).Info("No stats for a container", "containerID", r.id, "err", err)
			continue
		}
		ps, ok := pods[r.uid]
		if !ok {
			ps = &statsv1alpha1.PodStats{
				PodRef:    statsv1alpha1.PodReference{Name: r.name, Namespace: r.namespace, UID: string(r.uid)},
				StartTime: metav1.NewTime(r.startTime),
				CPU:       &statsv1alpha1.CPUStats{Time: metav1.NewTime(s.Timestamp)},
				Memory:    &statsv1alpha1.MemoryStats{Time: metav1.NewTime(s.Timestamp)},
			}
			pods[r.uid] = ps
			order = append(order, r.uid)
			sandboxes[r.uid] = r.sandboxID
		}
		cpu, mem := p.stats.cpuMemory(r.uid, r.id, s)
		ps.Containers = append(ps.Containers, statsv1alpha1.ContainerStats{
			Name: r.container, StartTime: metav1.NewTime(r.containerStarted), CPU: cpu, Memory: mem,
			IO: ioStats(s.Timestamp, s.PSI.IO),
		})
		addCPU(ps.CPU, cpu)
		addMemory(ps.Memory, mem)
	}
	reader, _ := p.rt.(SandboxStatsReader)
	for _, uid := range order {
		ps := pods[uid]
		if id := sandboxes[uid]; reader != nil && id != "" {
			if s, err := reader.SandboxStats(ctx, id); err != nil {
				klog.FromContext(ctx).V(4).Info("No stats for a pod as a whole", "pod", klog.KRef(ps.PodRef.Namespace, ps.PodRef.Name), "sandboxID", id, "err", err)
			} else {
				ps.CPU.PSI, ps.Memory.PSI = s.PSI.CPU, s.PSI.Memory
				ps.IO = ioStats(s.Timestamp, s.PSI.IO)
			}
		}
		summary.Pods = append(summary.Pods, *ps)
	}
	return summary, nil
}

// ioStats is the IO stats of a container or a pod: only the pressure stall information, as
// the kubelet's (IOStats has nothing else); nil without it (cgroup v1).
func ioStats(t time.Time, psi *statsv1alpha1.PSIStats) *statsv1alpha1.IOStats {
	if psi == nil {
		return nil
	}
	return &statsv1alpha1.IOStats{Time: metav1.NewTime(t), PSI: psi}
}

func addCPU(sum, c *statsv1alpha1.CPUStats) {
	sum.UsageCoreNanoSeconds = addUint(sum.UsageCoreNanoSeconds, c.UsageCoreNanoSeconds)
	sum.UsageNanoCores = addUint(sum.UsageNanoCores, c.UsageNanoCores)
}

func addMemory(sum, m *statsv1alpha1.MemoryStats) {
	sum.WorkingSetBytes = addUint(sum.WorkingSetBytes, m.WorkingSetBytes)
	sum.UsageBytes = addUint(sum.UsageBytes, m.UsageBytes)
	sum.RSSBytes = addUint(sum.RSSBytes, m.RSSBytes)
}

func addUint(a, b *uint64) *uint64 {
	if b == nil {
		return a
	}
	v := *b
	if a != nil {
		v += *a
	}
	return &v
}

// statsSamples keeps each container's previous CPU sample, to turn cumulative CPU time into a
// rate.
type statsSamples struct {
	mu   sync.Mutex
	last map[types.UID]map[string]*ContainerStats
}

func (s *statsSamples) cpuMemory(uid types.UID, id string, now *ContainerStats) (*statsv1alpha1.CPUStats, *statsv1alpha1.MemoryStats) {
	t := metav1.NewTime(now.Timestamp)
	cpu := &statsv1alpha1.CPUStats{Time: t, UsageCoreNanoSeconds: &now.CPUUsageCoreNanoSeconds, PSI: now.PSI.CPU}
	mem := &statsv1alpha1.MemoryStats{Time: t, WorkingSetBytes: &now.MemoryWorkingSetBytes, UsageBytes: &now.MemoryUsageBytes, RSSBytes: &now.MemoryWorkingSetBytes,
		PSI: now.PSI.Memory}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last == nil {
		s.last = map[types.UID]map[string]*ContainerStats{}
	}
	if s.last[uid] == nil {
		s.last[uid] = map[string]*ContainerStats{}
	}
	if prev := s.last[uid][id]; prev != nil && now.Timestamp.After(prev.Timestamp) && now.CPUUsageCoreNanoSeconds >= prev.CPUUsageCoreNanoSeconds {
		rate := uint64(float64(now.CPUUsageCoreNanoSeconds-prev.CPUUsageCoreNanoSeconds) / now.Timestamp.Sub(prev.Timestamp).Seconds())
		cpu.UsageNanoCores = &rate
	}
	s.last[uid][id] = now
	return cpu, mem
}

func (s *statsSamples) forget(uid types.UID) {
	s.mu.Lock()
	delete(s.last, uid)
	s.mu.Unlock()
}
