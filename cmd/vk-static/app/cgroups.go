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
	fs.StringVar(&c.CgroupDriver, "cgroup-driver", c.CgroupDriver, "With --provider process: how cgroups are made: cgroupfs (the cgroup filesystem directly, v1 or v2); systemd is taken for cgroupfs, with a warning.")
	fs.Int64Var(&c.PodPidsLimit, "pod-pids-limit", c.PodPidsLimit, "With --provider process: the most processes and threads a pod's cgroup may hold; -1 is no limit.")
}

func (c *cgroupOptions) validate(bad func(flag, format string, args ...any)) {
	if !path.IsAbs(c.CgroupRoot) {
		bad("cgroup-root", "%q is not an absolute cgroup path such as / or /vk-static", c.CgroupRoot)
	}
	// systemd is accepted, so that a kubelet's configuration can be reused as it is: the cgroups
	// are made on the cgroup filesystem all the same, and the start says so (logCgroups).
	if c.CgroupDriver != cgroupDriverCgroupfs && c.CgroupDriver != cgroupDriverSystemd {
		bad("cgroup-driver", "%q is not a cgroup driver: use cgroupfs", c.CgroupDriver)
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
}

// processCgroups is the process runtime's cgroup configuration.
func (c *cgroupOptions) processCgroups() *process.Cgroups {
	return &process.Cgroups{Root: c.CgroupRoot, PerQOS: c.CgroupsPerQOS, PodPidsLimit: c.PodPidsLimit}
}

// logCgroups says at start whether the process provider's containers have cgroups: without
// them their limits are not enforced, and the operator must know it.
func logCgroups(ctx context.Context, rt *process.Runtime, c *cgroupOptions) {
	log := klog.FromContext(ctx)
	if c.CgroupDriver == cgroupDriverSystemd {
		log.Info("Warning: --cgroup-driver systemd is not supported: the process provider makes its cgroups with cgroupfs")
	}
	if err := rt.CgroupsUnavailable(); err != nil {
		log.Info("Containers run without cgroups: resource limits are not enforced, stats and stops follow process groups", "reason", err.Error())
		return
	}
	log.Info("Containers run in cgroups", "version", rt.CgroupVersion(), "cgroupRoot", c.CgroupRoot, "cgroupsPerQOS", c.CgroupsPerQOS, "podPidsLimit", c.PodPidsLimit)
}
