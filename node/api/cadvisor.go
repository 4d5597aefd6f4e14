package api

import (
	"net/http"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/vk-static/vk-static/provider"
)

// The kubelet's /metrics/cadvisor series that a Summary can give, with cAdvisor's names, help
// texts, types and labels (github.com/google/cadvisor metrics/prometheus.go and
// prometheus_machine.go, as the kubelet v1.36 sets them up in pkg/kubelet/server/server.go):
// every container series has the labels the kubelet gives them — container, id, image, name,
// namespace, pod — and some one more (cpu, device, interface).
var (
	cadvisorLabels = []string{"container", "id", "image", "name", "namespace", "pod"}

	cadvisorCPUDesc = cadvisorDesc("container_cpu_usage_seconds_total",
		"Cumulative cpu time consumed in seconds.", "cpu")
	cadvisorWorkingSetDesc = cadvisorDesc("container_memory_working_set_bytes",
		"Current working set in bytes.")
	cadvisorMemoryUsageDesc = cadvisorDesc("container_memory_usage_bytes",
		"Current memory usage in bytes, including all memory regardless of when it was accessed")
	cadvisorRSSDesc = cadvisorDesc("container_memory_rss",
		"Size of RSS in bytes.")
	cadvisorSwapDesc = cadvisorDesc("container_memory_swap",
		"Container swap usage in bytes.")
	cadvisorFsUsageDesc = cadvisorDesc("container_fs_usage_bytes",
		"Number of bytes that are consumed by the container on this filesystem.", "device")
	cadvisorFsLimitDesc = cadvisorDesc("container_fs_limit_bytes",
		"Number of bytes that can be consumed by the container on this filesystem.", "device")
	cadvisorInodesFreeDesc = cadvisorDesc("container_fs_inodes_free",
		"Number of available Inodes", "device")
	cadvisorInodesDesc = cadvisorDesc("container_fs_inodes_total",
		"Number of Inodes", "device")
	cadvisorRxBytesDesc = cadvisorDesc("container_network_receive_bytes_total",
		"Cumulative count of bytes received", "interface")
	cadvisorRxErrorsDesc = cadvisorDesc("container_network_receive_errors_total",
		"Cumulative count of errors encountered while receiving", "interface")
	cadvisorTxBytesDesc = cadvisorDesc("container_network_transmit_bytes_total",
		"Cumulative count of bytes transmitted", "interface")
	cadvisorTxErrorsDesc = cadvisorDesc("container_network_transmit_errors_total",
		"Cumulative count of errors encountered while transmitting", "interface")
	cadvisorStartTimeDesc = cadvisorDesc("container_start_time_seconds",
		"Start time of the container since unix epoch in seconds.")
	cadvisorCPUStalledDesc = cadvisorDesc("container_pressure_cpu_stalled_seconds_total",
		"Total time duration no tasks in the container could make progress due to CPU congestion.")
	cadvisorCPUWaitingDesc = cadvisorDesc("container_pressure_cpu_waiting_seconds_total",
		"Total time duration tasks in the container have waited due to CPU congestion.")
	cadvisorMemoryStalledDesc = cadvisorDesc("container_pressure_memory_stalled_seconds_total",
		"Total time duration no tasks in the container could make progress due to memory congestion.")
	cadvisorMemoryWaitingDesc = cadvisorDesc("container_pressure_memory_waiting_seconds_total",
		"Total time duration tasks in the container have waited due to memory congestion.")
	cadvisorIOStalledDesc = cadvisorDesc("container_pressure_io_stalled_seconds_total",
		"Total time duration no tasks in the container could make progress due to IO congestion.")
	cadvisorIOWaitingDesc = cadvisorDesc("container_pressure_io_waiting_seconds_total",
		"Total time duration tasks in the container have waited due to IO congestion.")
	cadvisorScrapeErrorDesc = prometheus.NewDesc("container_scrape_error",
		"1 if there was an error while getting container metrics, 0 otherwise", nil, nil)

	machineLabels          = []string{"machine_id", "system_uuid", "boot_id"}
	machineCPUCoresDesc    = prometheus.NewDesc("machine_cpu_cores", "Number of logical CPU cores.", machineLabels, nil)
	machineMemoryBytesDesc = prometheus.NewDesc("machine_memory_bytes", "Amount of memory installed on the machine.", machineLabels, nil)
)

func cadvisorDesc(name, help string, extra ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, slices.Concat(cadvisorLabels, extra), nil)
}

// cadvisorMetrics serves /metrics/cadvisor: the provider's Summary as cAdvisor's container
// metrics, and the Node's capacity as its machine metrics. A provider without
// StatsSummaryHandler serves the machine metrics alone, and one whose Summary fails answers
// container_scrape_error 1 besides them, as cAdvisor does when it cannot list its containers.
func (rt Routes) cadvisorMetrics(w http.ResponseWriter, r *http.Request) {
	c := cadvisorCollector{node: rt.Node, pods: rt.Pods}
	if stats, ok := rt.Provider.(provider.StatsSummaryHandler); ok {
		summary, err := stats.GetStatsSummary(r.Context())
		if err != nil {
			klog.FromContext(r.Context()).Error(err, "Getting the stats summary for /metrics/cadvisor")
			c.failed = true
		} else {
			c.summary = summary
		}
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}).ServeHTTP(w, r)
}

// cadvisorCollector turns one Summary (nil: none) into cAdvisor's series, one set per cgroup
// cAdvisor would report: the machine's root ("/"), each pod's (container "") and each of its
// containers'.
type cadvisorCollector struct {
	summary *statsv1alpha1.Summary
	failed  bool
	node    *corev1.Node
	pods    podsByUID
}

// podsByUID finds the pod a Summary's pod reference names (the UID the provider was given).
type podsByUID interface {
	GetPodByUID(types.UID) (*corev1.Pod, bool)
}

func (cadvisorCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{cadvisorCPUDesc, cadvisorWorkingSetDesc, cadvisorMemoryUsageDesc, cadvisorRSSDesc,
		cadvisorSwapDesc, cadvisorFsUsageDesc, cadvisorFsLimitDesc, cadvisorInodesFreeDesc, cadvisorInodesDesc,
		cadvisorRxBytesDesc, cadvisorRxErrorsDesc, cadvisorTxBytesDesc, cadvisorTxErrorsDesc, cadvisorStartTimeDesc,
		cadvisorCPUStalledDesc, cadvisorCPUWaitingDesc, cadvisorMemoryStalledDesc, cadvisorMemoryWaitingDesc,
		cadvisorIOStalledDesc, cadvisorIOWaitingDesc, cadvisorScrapeErrorDesc, machineCPUCoresDesc, machineMemoryBytesDesc} {
		ch <- d
	}
}

func (c cadvisorCollector) Collect(ch chan<- prometheus.Metric) {
	c.collectMachine(ch)
	failed := 0.0
	if c.failed {
		failed = 1
	}
	ch <- prometheus.MustNewConstMetric(cadvisorScrapeErrorDesc, prometheus.GaugeValue, failed)
	if c.summary == nil {
		return
	}
	n := &c.summary.Node
	// The root cgroup: every label but id empty.
	collectCgroup(ch, cgroupStats{
		labels: []string{"", "/", "", "", "", ""}, start: n.StartTime,
		cpu: n.CPU, memory: n.Memory, io: n.IO, swap: n.Swap, fs: n.Fs, network: n.Network,
	})
	for i := range c.summary.Pods {
		p := &c.summary.Pods[i]
		ns, name, uid := p.PodRef.Namespace, p.PodRef.Name, p.PodRef.UID
		// The pod's cgroup, with container and image empty as cAdvisor's are; its network is the
		// pod's own (none for a pod on the host's network).
		podID := "/pod" + uid
		collectCgroup(ch, cgroupStats{
			labels: []string{"", podID, "", "", ns, name}, start: p.StartTime,
			cpu: p.CPU, memory: p.Memory, io: p.IO, swap: p.Swap, network: p.Network,
		})
		pod := c.pod(types.UID(uid))
		for j := range p.Containers {
			ct := &p.Containers[j]
			collectCgroup(ch, cgroupStats{
				labels: []string{ct.Name, podID + "/" + ct.Name, containerImage(pod, ct.Name), "", ns, name}, start: ct.StartTime,
				cpu: ct.CPU, memory: ct.Memory, io: ct.IO, swap: ct.Swap, fs: ct.Rootfs,
			})
		}
	}
}

// collectMachine sends the machine metrics from the Node's capacity, labelled with its
// nodeInfo's machine ID, system UUID and boot ID.
func (c cadvisorCollector) collectMachine(ch chan<- prometheus.Metric) {
	if c.node == nil {
		return
	}
	info := c.node.Status.NodeInfo
	labels := []string{info.MachineID, info.SystemUUID, info.BootID}
	if cpu, ok := c.node.Status.Capacity[corev1.ResourceCPU]; ok {
		ch <- prometheus.MustNewConstMetric(machineCPUCoresDesc, prometheus.GaugeValue, float64(cpu.MilliValue())/1000, labels...)
	}
	if mem, ok := c.node.Status.Capacity[corev1.ResourceMemory]; ok {
		ch <- prometheus.MustNewConstMetric(machineMemoryBytesDesc, prometheus.GaugeValue, float64(mem.Value()), labels...)
	}
}

func (c cadvisorCollector) pod(uid types.UID) *corev1.Pod {
	if c.pods == nil {
		return nil
	}
	p, _ := c.pods.GetPodByUID(uid)
	return p
}

// containerImage is the image of the pod's container name as its spec gives it; "" for a pod
// the agent no longer holds.
func containerImage(pod *corev1.Pod, name string) string {
	if pod == nil {
		return ""
	}
	for _, list := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range list {
			if list[i].Name == name {
				return list[i].Image
			}
		}
	}
	for i := range pod.Spec.EphemeralContainers {
		if pod.Spec.EphemeralContainers[i].Name == name {
			return pod.Spec.EphemeralContainers[i].Image
		}
	}
	return ""
}

// cgroupStats is what the Summary says of one cgroup, with the values of cadvisorLabels.
type cgroupStats struct {
	labels  []string
	start   metav1.Time
	cpu     *statsv1alpha1.CPUStats
	memory  *statsv1alpha1.MemoryStats
	io      *statsv1alpha1.IOStats
	swap    *statsv1alpha1.SwapStats
	fs      *statsv1alpha1.FsStats
	network *statsv1alpha1.NetworkStats
}

// collectCgroup sends the series of one cgroup that its stats have, each timed by its sample
// as cAdvisor's are, but the start time, which is in whole seconds and untimed as cAdvisor's.
// The CPU time is cAdvisor's total (cpu="total", as without per-CPU usage), left out while
// zero as cAdvisor leaves it; the filesystem's device is unknown to the Summary (device="").
func collectCgroup(ch chan<- prometheus.Metric, s cgroupStats) {
	gauge := func(d *prometheus.Desc, at metav1.Time, v *uint64, extra ...string) {
		if v != nil {
			ch <- timed(at, prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(*v), slices.Concat(s.labels, extra)...))
		}
	}
	counter := func(d *prometheus.Desc, at metav1.Time, v float64, extra ...string) {
		ch <- timed(at, prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, slices.Concat(s.labels, extra)...))
	}
	// PSI totals are the kernel's microseconds (see internal/psi), in seconds here as cAdvisor's.
	pressure := func(stalled, waiting *prometheus.Desc, at metav1.Time, psi *statsv1alpha1.PSIStats) {
		if psi != nil {
			counter(stalled, at, float64(psi.Full.Total)/1e6)
			counter(waiting, at, float64(psi.Some.Total)/1e6)
		}
	}

	if !s.start.IsZero() {
		ch <- prometheus.MustNewConstMetric(cadvisorStartTimeDesc, prometheus.GaugeValue, float64(s.start.Unix()), s.labels...)
	}
	if cpu := s.cpu; cpu != nil {
		if cpu.UsageCoreNanoSeconds != nil && *cpu.UsageCoreNanoSeconds > 0 {
			counter(cadvisorCPUDesc, cpu.Time, float64(*cpu.UsageCoreNanoSeconds)/1e9, "total")
		}
		pressure(cadvisorCPUStalledDesc, cadvisorCPUWaitingDesc, cpu.Time, cpu.PSI)
	}
	if mem := s.memory; mem != nil {
		gauge(cadvisorWorkingSetDesc, mem.Time, mem.WorkingSetBytes)
		gauge(cadvisorMemoryUsageDesc, mem.Time, mem.UsageBytes)
		gauge(cadvisorRSSDesc, mem.Time, mem.RSSBytes)
		pressure(cadvisorMemoryStalledDesc, cadvisorMemoryWaitingDesc, mem.Time, mem.PSI)
	}
	if io := s.io; io != nil {
		pressure(cadvisorIOStalledDesc, cadvisorIOWaitingDesc, io.Time, io.PSI)
	}
	if swap := s.swap; swap != nil {
		gauge(cadvisorSwapDesc, swap.Time, swap.SwapUsageBytes)
	}
	if fs := s.fs; fs != nil {
		gauge(cadvisorFsUsageDesc, fs.Time, fs.UsedBytes, "")
		gauge(cadvisorFsLimitDesc, fs.Time, fs.CapacityBytes, "")
		gauge(cadvisorInodesFreeDesc, fs.Time, fs.InodesFree, "")
		gauge(cadvisorInodesDesc, fs.Time, fs.Inodes, "")
	}
	if net := s.network; net != nil {
		interfaces := net.Interfaces
		if len(interfaces) == 0 && net.Name != "" {
			interfaces = []statsv1alpha1.InterfaceStats{net.InterfaceStats}
		}
		for _, i := range interfaces {
			count := func(d *prometheus.Desc, v *uint64) {
				if v != nil {
					counter(d, net.Time, float64(*v), i.Name)
				}
			}
			count(cadvisorRxBytesDesc, i.RxBytes)
			count(cadvisorRxErrorsDesc, i.RxErrors)
			count(cadvisorTxBytesDesc, i.TxBytes)
			count(cadvisorTxErrorsDesc, i.TxErrors)
		}
	}
}
