package api

import (
	"net/http"

	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/vk-static/vk-static/provider"
)

// statsSummary serves /stats/summary: the provider's Summary as JSON, what metrics-server and
// kubectl top read. Pod references carry the UID the provider was given (a static pod's own,
// not its mirror's), as the kubelet's do. With only_cpu_and_memory=true (metrics-server asks
// so) it keeps what the kubelet's GetCPUAndMemoryStats keeps: the node's, the pods' and the
// containers' CPU, memory and swap, their start times and the node's system containers.
func (rt Routes) statsSummary(w http.ResponseWriter, r *http.Request) {
	stats, ok := capability[provider.StatsSummaryHandler](w, rt.Provider)
	if !ok {
		return
	}
	summary, err := stats.GetStatsSummary(r.Context())
	if err != nil {
		writeProviderError(w, r, err)
		return
	}
	if r.URL.Query().Get("only_cpu_and_memory") == "true" {
		summary = cpuAndMemory(summary)
	}
	writeJSON(w, r, summary)
}

// cpuAndMemory is s with only its CPU, memory and swap figures.
func cpuAndMemory(s *statsv1alpha1.Summary) *statsv1alpha1.Summary {
	containers := func(cs []statsv1alpha1.ContainerStats) []statsv1alpha1.ContainerStats {
		out := make([]statsv1alpha1.ContainerStats, 0, len(cs))
		for _, c := range cs {
			out = append(out, statsv1alpha1.ContainerStats{Name: c.Name, StartTime: c.StartTime, CPU: c.CPU, Memory: c.Memory, Swap: c.Swap})
		}
		return out
	}
	out := &statsv1alpha1.Summary{Node: statsv1alpha1.NodeStats{
		NodeName: s.Node.NodeName, StartTime: s.Node.StartTime, CPU: s.Node.CPU, Memory: s.Node.Memory, Swap: s.Node.Swap,
		SystemContainers: containers(s.Node.SystemContainers),
	}}
	for _, p := range s.Pods {
		out.Pods = append(out.Pods, statsv1alpha1.PodStats{PodRef: p.PodRef, StartTime: p.StartTime,
			CPU: p.CPU, Memory: p.Memory, Swap: p.Swap, Containers: containers(p.Containers)})
	}
	return out
}
