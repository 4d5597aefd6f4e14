package mock

import (
	"cmp"
	"context"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/vk-static/vk-static/provider"
)

var _ provider.StatsSummaryHandler = (*Provider)(nil)

// What a simulated container uses when its spec requests nothing (the values below in the units
// GetStatsSummary computes with; a test holds them equal).
const (
	DefaultContainerCPU    = "10m"
	DefaultContainerMemory = "16Mi"

	defaultContainerMilliCPU    = 10
	defaultContainerMemoryBytes = 16 << 20
)

// GetStatsSummary reports what the simulated containers use, derived from their specs so that
// it is deterministic: a running container uses exactly its CPU and memory requests
// (DefaultContainerCPU and DefaultContainerMemory when it has none), its cumulative CPU time
// grows at that rate on the provider's clock from its start, and pods and the node are the sums
// of their containers. Pods is every pod with a running container, by namespace and name; the
// node's start time is the provider's.
func (p *Provider) GetStatsSummary(ctx context.Context) (*statsv1alpha1.Summary, error) {
	p.mu.Lock()
	now := p.cfg.Clock.Now()
	pods := make([]*podRecord, 0, len(p.pods))
	for _, e := range p.pods {
		pods = append(pods, e.rec) // never modified: read after the lock
	}
	p.mu.Unlock()
	slices.SortFunc(pods, func(a, b *podRecord) int {
		return cmp.Or(cmp.Compare(a.namespace, b.namespace), cmp.Compare(a.name, b.name))
	})

	at := metav1.NewTime(now)
	var nodeUse usage
	summary := &statsv1alpha1.Summary{Pods: []statsv1alpha1.PodStats{}}
	for _, pod := range pods {
		ps := statsv1alpha1.PodStats{
			PodRef: statsv1alpha1.PodReference{Name: pod.name, Namespace: pod.namespace, UID: string(pod.uid)},
		}
		if pod.status.startTime != nil {
			ps.StartTime = *pod.status.startTime
		}
		var podUse usage
		add := func(specs []keptContainer, statuses []corev1.ContainerStatus) {
			for i := range statuses {
				cs := &statuses[i]
				c := findContainer(specs, cs.Name)
				if cs.State.Running == nil || c == nil {
					continue
				}
				u := containerUsage(c.requests, now.Sub(cs.State.Running.StartedAt.Time))
				podUse.add(u)
				ps.Containers = append(ps.Containers, statsv1alpha1.ContainerStats{
					Name: cs.Name, StartTime: cs.State.Running.StartedAt, CPU: u.cpu(at), Memory: u.memory(at),
				})
			}
		}
		add(pod.initContainers, pod.status.initContainerStatuses) // sidecars
		add(pod.containers, pod.status.containerStatuses)
		if len(ps.Containers) == 0 {
			continue
		}
		ps.CPU, ps.Memory = podUse.cpu(at), podUse.memory(at)
		nodeUse.add(podUse)
		summary.Pods = append(summary.Pods, ps)
	}

	summary.Node = statsv1alpha1.NodeStats{
		NodeName:  p.cfg.NodeName,
		StartTime: metav1.NewTime(p.started),
		CPU:       nodeUse.cpu(at),
		Memory:    nodeUse.memory(at),
	}
	available := uint64(0)
	if capacity := uint64(p.cfg.Memory.Value()); capacity > nodeUse.memoryBytes {
		available = capacity - nodeUse.memoryBytes
	}
	summary.Node.Memory.AvailableBytes = &available
	return summary, nil
}

// usage is what a container, a pod or the node uses.
type usage struct {
	nanoCores       uint64 // CPU rate
	coreNanoSeconds uint64 // CPU time since the start
	memoryBytes     uint64 // working set, which is also the usage: nothing is reclaimable
}

func (u *usage) add(o usage) {
	u.nanoCores += o.nanoCores
	u.coreNanoSeconds += o.coreNanoSeconds
	u.memoryBytes += o.memoryBytes
}

func (u usage) cpu(at metav1.Time) *statsv1alpha1.CPUStats {
	rate, total := u.nanoCores, u.coreNanoSeconds
	return &statsv1alpha1.CPUStats{Time: at, UsageNanoCores: &rate, UsageCoreNanoSeconds: &total}
}

func (u usage) memory(at metav1.Time) *statsv1alpha1.MemoryStats {
	workingSet, used := u.memoryBytes, u.memoryBytes
	return &statsv1alpha1.MemoryStats{Time: at, WorkingSetBytes: &workingSet, UsageBytes: &used}
}

// containerUsage is what a container that requests requests uses after running for d.
func containerUsage(requests corev1.ResourceList, d time.Duration) usage {
	milli, memory := int64(defaultContainerMilliCPU), int64(defaultContainerMemoryBytes)
	if q, ok := requests[corev1.ResourceCPU]; ok {
		milli = q.MilliValue()
	}
	if q, ok := requests[corev1.ResourceMemory]; ok {
		memory = q.Value()
	}
	m, ns := uint64(max(milli, 0)), uint64(max(d, 0))
	// m × ns / 1000, computed per second and remainder: m × ns itself would overflow within
	// days for a container of a few cores, this only after years.
	seconds, rest := ns/uint64(time.Second), ns%uint64(time.Second)
	return usage{
		nanoCores:       m * 1e6,
		coreNanoSeconds: m*seconds*1e6 + m*rest/1000,
		memoryBytes:     uint64(max(memory, 0)),
	}
}
