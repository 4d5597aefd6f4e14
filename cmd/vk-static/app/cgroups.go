package app

import (
	"context"
	"path"

	"github.com/spf13/pflag"
	"k8s.io/klog/v2"

	kubeletv1beta1 "github.com/vk-static/vk-static/cmd/vk-static/internal/kubeletconfig/v1beta1"
	"github.com/vk-static/vk-static/runtime/process"
)

// cgroupOptions are the kubelet's cgroup flags, for --provider process (the CRI runtime makes
// its own cgroups).
type cgroupOptions struct {
	CgroupRoot    string
	CgroupsPerQOS bool
	CgroupDriver  string
	PodPidsLimit  int64
	// SingleProcessOOMKill is the kubelet's singleProcessOOMKill (a --config field the kubelet
	// has no flag for; vk-static has both).
	SingleProcessOOMKill bool
}

// The kubelet's defaults.
func defaultCgroupOptions() cgroupOptions {
	return cgroupOptions{CgroupRoot: "/", CgroupsPerQOS: true, CgroupDriver: cgroupDriverCgroupfs, PodPidsLimit: -1}
}

const (
	cgroupDriverCgroupfs = "cgroupfs"
	cgroupDriverSystemd  = "systemd"
)

func (c *cgroupOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.CgroupRoot, "cgroup-root", c.CgroupRoot, "With --provider process: the cgroup under which pods' cgroups are made (kubepods, then a cgroup per pod and per container), as the kubelet's.")
	fs.BoolVar(&c.CgroupsPerQOS, "cgroups-per-qos", c.CgroupsPerQOS, "With --provider process: put each pod's cgroup under its QoS class's (kubepods, kubepods/burstable, kubepods/besteffort), as the kubelet does.")
	fs.StringVar(&c.CgroupDriver, "cgroup-driver", c.CgroupDriver, "With --provider process: how cgroups are made: cgroupfs, the cgroup filesystem directly (v1 or v2), the only driver; systemd is refused. Under systemd, run the agent in a unit with Delegate=yes, as deploy/vk-static.service does.")
	fs.Int64Var(&c.PodPidsLimit, "pod-pids-limit", c.PodPidsLimit, "With --provider process: the most processes and threads a pod's cgroup may hold; -1 is no limit.")
	fs.BoolVar(&c.SingleProcessOOMKill, "single-process-oom-kill", c.SingleProcessOOMKill, "With --provider process, on cgroup v2: when a container runs out of memory, the kernel's OOM killer ends only the process it chose, as on cgroup v1, instead of every process of the container (memory.oom.group, the kubelet's default). The container then ends only if that process was its main one.")
}

func (c *cgroupOptions) validate(bad func(flag, format string, args ...any)) {
	if !path.IsAbs(c.CgroupRoot) {
		bad("cgroup-root", "%q is not an absolute cgroup path such as / or /vk-static", c.CgroupRoot)
	}
	if c.CgroupDriver != cgroupDriverCgroupfs && c.CgroupDriver != cgroupDriverSystemd {
		bad("cgroup-driver", "%q is not a cgroup driver: use cgroupfs", c.CgroupDriver)
	}
}

// validateCgroupDriver refuses the systemd driver for the process provider, which makes its
// cgroups on the cgroup filesystem: taking systemd for cgroupfs, as it once did, left the
// operator believing systemd managed them. A CRI runtime makes its own cgroups, with the
// driver it is configured with, so the CRI provider takes a kubelet configuration that names
// systemd as it is.
func (o *options) validateCgroupDriver(bad func(flag, format string, args ...any)) {
	if o.Provider == providerProcess && o.Process.Cgroups.CgroupDriver == cgroupDriverSystemd {
		bad("cgroup-driver", "systemd is not supported by --provider process: use cgroupfs, and under systemd run the agent in a unit with Delegate=yes (deploy/vk-static.service), whose subtree systemd then leaves to it (docs/deploy.md)")
	}
}

// applyCgroupConfig applies a KubeletConfiguration's cgroup fields.
func applyCgroupConfig(cfg *kubeletv1beta1.KubeletConfiguration, o *options, set func(flag string, apply func())) {
	c := &o.Process.Cgroups
	if cfg.CgroupRoot != "" {
		set("cgroup-root", func() { c.CgroupRoot = cfg.CgroupRoot })
	}
	if cfg.CgroupsPerQOS != nil {
		set("cgroups-per-qos", func() { c.CgroupsPerQOS = *cfg.CgroupsPerQOS })
	}
	if cfg.CgroupDriver != "" {
		set("cgroup-driver", func() { c.CgroupDriver = cfg.CgroupDriver })
	}
	if cfg.PodPidsLimit != nil {
		set("pod-pids-limit", func() { c.PodPidsLimit = *cfg.PodPidsLimit })
	}
	if cfg.SingleProcessOOMKill != nil {
		set("single-process-oom-kill", func() { c.SingleProcessOOMKill = *cfg.SingleProcessOOMKill })
	}
}

// processCgroups is the process runtime's cgroup configuration.
func (c *cgroupOptions) processCgroups() *process.Cgroups {
	return &process.Cgroups{Root: c.CgroupRoot, PerQOS: c.CgroupsPerQOS, PodPidsLimit: c.PodPidsLimit, SingleProcessOOMKill: c.SingleProcessOOMKill}
}

// logCgroups says at start whether the process provider's containers have cgroups: without
// them their limits are not enforced, and the operator must know it.
func logCgroups(ctx context.Context, rt *process.Runtime, c *cgroupOptions) {
	log := klog.FromContext(ctx)
	if err := rt.CgroupsUnavailable(); err != nil {
		log.Info("Containers run without cgroups: resource limits are not enforced, stats and stops follow process groups", "reason", err.Error())
		return
	}
	log.Info("Containers run in cgroups", "version", rt.CgroupVersion(), "cgroupRoot", c.CgroupRoot, "cgroupsPerQOS", c.CgroupsPerQOS, "podPidsLimit", c.PodPidsLimit,
		"singleProcessOOMKill", c.SingleProcessOOMKill)
}
