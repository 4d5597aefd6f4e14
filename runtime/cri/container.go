package cri

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/vk-static/vk-static/lifecycle"
)

// CreateContainer creates cfg's container in the sandbox.
func (r *Runtime) CreateContainer(ctx context.Context, sandboxID string, cfg *lifecycle.ContainerConfig) (string, error) {
	sc := r.sandboxConfigFor(sandboxID, cfg)
	cc, err := containerConfig(cfg, sc, r.cfg.SeccompProfileRoot)
	if err != nil {
		return "", err
	}
	id, err := r.rs.CreateContainer(ctx, sandboxID, cc, sc)
	if err != nil {
		return "", notFound(fmt.Errorf("create container %s: %w", cfg.Name, err), "sandbox", sandboxID)
	}
	return id, nil
}

// sandboxConfigFor is the config the sandbox was run with, or for a sandbox from before the
// agent restarted, the config rebuilt from the container's pod (CRI runtimes take the log
// directory and the pod's security context from it).
func (r *Runtime) sandboxConfigFor(sandboxID string, cfg *lifecycle.ContainerConfig) *runtimeapi.PodSandboxConfig {
	r.mu.Lock()
	sc := r.sandboxConfigs[sandboxID]
	r.mu.Unlock()
	if sc != nil {
		return sc
	}
	pod := cfg.Pod
	if pod == nil {
		pod = &corev1.Pod{}
	}
	return podSandboxConfig(&lifecycle.SandboxConfig{
		PodUID: pod.UID, Namespace: pod.Namespace, Name: pod.Name, HostNetwork: pod.Spec.HostNetwork,
		// The lifecycle's log paths are <log directory>/<container>/<attempt>.log.
		LogDirectory: filepath.Dir(filepath.Dir(cfg.LogPath)), Pod: pod,
	}, r.cfg.SeccompProfileRoot)
}

// containerConfig is the CRI container config for cfg in the sandbox sc, as the kubelet's
// generateContainerConfig.
func containerConfig(cfg *lifecycle.ContainerConfig, sc *runtimeapi.PodSandboxConfig, seccompRoot string) (*runtimeapi.ContainerConfig, error) {
	logPath, err := filepath.Rel(sc.GetLogDirectory(), cfg.LogPath)
	if err != nil || strings.HasPrefix(logPath, "..") {
		return nil, fmt.Errorf("container %s: log path %s is not under the sandbox's log directory %s", cfg.Name, cfg.LogPath, sc.GetLogDirectory())
	}
	pod, c := cfg.Pod, cfg.Container
	if pod == nil {
		pod = &corev1.Pod{}
	}
	if c == nil {
		c = &corev1.Container{Name: cfg.Name}
	}
	cc := &runtimeapi.ContainerConfig{
		Metadata:   &runtimeapi.ContainerMetadata{Name: cfg.Name, Attempt: cfg.Attempt},
		Image:      &runtimeapi.ImageSpec{Image: cfg.ImageRef, UserSpecifiedImage: cfg.Image},
		Command:    cfg.Command,
		Args:       cfg.Args,
		WorkingDir: cfg.WorkingDir,
		Labels:     withManaged(cfg.Labels),
		Annotations: map[string]string{
			"io.kubernetes.container.restartCount": strconv.FormatUint(uint64(cfg.Attempt), 10),
		},
		LogPath:   logPath,
		Stdin:     cfg.Stdin,
		StdinOnce: cfg.StdinOnce,
		Tty:       cfg.TTY,
	}
	if cc.Image.Image == "" {
		cc.Image.Image = cfg.Image
	}
	for _, e := range cfg.Env {
		k, v, _ := strings.Cut(e, "=")
		cc.Envs = append(cc.Envs, &runtimeapi.KeyValue{Key: k, Value: []byte(v)})
	}
	cc.Mounts = mounts(cfg.Mounts, c.VolumeMounts)
	hostNetwork := sc.GetLinux().GetSecurityContext().GetNamespaceOptions().GetNetwork() == runtimeapi.NamespaceMode_NODE
	cc.Linux = &runtimeapi.LinuxContainerConfig{
		Resources:       resources(c),
		SecurityContext: containerSecurityContext(pod, c, hostNetwork, seccompRoot),
	}
	targetNamespace(cc.Linux.SecurityContext.GetNamespaceOptions(), cfg.TargetContainerID)
	if cfg.StopSignal != 0 {
		cc.StopSignal = stopSignal(cfg.StopSignal)
	}
	return cc, nil
}

// mounts are the container's bind mounts, with the mountPropagation of the volume mount at
// the same container path. A subPath's HostPath is the lifecycle's bind mount of what it
// checked, at a path of the pod's own (lifecycle/volume), so that the runtime resolving it
// again cannot be sent elsewhere by a container that shares the volume.
func mounts(ms []lifecycle.Mount, specs []corev1.VolumeMount) []*runtimeapi.Mount {
	propagation := map[string]runtimeapi.MountPropagation{}
	for _, vm := range specs {
		if vm.MountPropagation == nil {
			continue
		}
		switch *vm.MountPropagation {
		case corev1.MountPropagationHostToContainer:
			propagation[vm.MountPath] = runtimeapi.MountPropagation_PROPAGATION_HOST_TO_CONTAINER
		case corev1.MountPropagationBidirectional:
			propagation[vm.MountPath] = runtimeapi.MountPropagation_PROPAGATION_BIDIRECTIONAL
		}
	}
	var out []*runtimeapi.Mount
	for _, m := range ms {
		out = append(out, &runtimeapi.Mount{
			HostPath: m.HostPath, ContainerPath: m.ContainerPath, Readonly: m.ReadOnly,
			Propagation: propagation[m.ContainerPath],
		})
	}
	return out
}

// CPU constants of the kubelet's cm helpers.
const (
	minShares     = 2
	maxShares     = 262144
	sharesPerCPU  = 1024
	milliCPUToCPU = 1000
	quotaPeriod   = 100000 // µs: 100 ms
	minQuota      = 1000
)

// resources are the container's Linux resources from its requests and limits, as the
// kubelet's calculateLinuxResources: cpu shares from the request (the limit when only it is
// set; 2 when neither), CFS quota from the limit, the memory limit.
func resources(c *corev1.Container) *runtimeapi.LinuxContainerResources {
	req, limit := c.Resources.Requests, c.Resources.Limits
	out := &runtimeapi.LinuxContainerResources{}
	cpuReq, hasReq := req[corev1.ResourceCPU]
	cpuLimit, hasLimit := limit[corev1.ResourceCPU]
	switch {
	case hasReq:
		out.CpuShares = milliCPUToShares(cpuReq.MilliValue())
	case hasLimit:
		out.CpuShares = milliCPUToShares(cpuLimit.MilliValue())
	default:
		out.CpuShares = minShares
	}
	if hasLimit {
		out.CpuPeriod = quotaPeriod
		out.CpuQuota = max(cpuLimit.MilliValue()*quotaPeriod/milliCPUToCPU, minQuota)
	}
	if mem, ok := limit[corev1.ResourceMemory]; ok {
		out.MemoryLimitInBytes = mem.Value()
	}
	return out
}

func milliCPUToShares(milli int64) int64 {
	if milli == 0 {
		return minShares
	}
	shares := milli * sharesPerCPU / milliCPUToCPU
	return min(max(shares, minShares), maxShares)
}

// stopSignal maps a signal number to CRI's enum; an unknown one is the runtime's default.
func stopSignal(sig int) runtimeapi.Signal {
	name := "SIG" + strings.TrimPrefix(strings.ToUpper(signalName(sig)), "SIG")
	if v, ok := runtimeapi.Signal_value[name]; ok {
		return runtimeapi.Signal(v)
	}
	return runtimeapi.Signal_RUNTIME_DEFAULT
}

// StartContainer starts a created container.
func (r *Runtime) StartContainer(ctx context.Context, containerID string) error {
	return notFound(r.rs.StartContainer(ctx, containerID), "container", containerID)
}

// StopContainer stops a container with grace, rounded up to CRI's whole seconds.
func (r *Runtime) StopContainer(ctx context.Context, containerID string, grace time.Duration) error {
	timeout := int64(math.Ceil(grace.Seconds()))
	return notFound(r.rs.StopContainer(ctx, containerID, max(timeout, 0)), "container", containerID)
}

// RemoveContainer removes a container that is not running.
func (r *Runtime) RemoveContainer(ctx context.Context, containerID string) error {
	return notFound(r.rs.RemoveContainer(ctx, containerID), "container", containerID)
}

// ContainerStatus reports one container.
func (r *Runtime) ContainerStatus(ctx context.Context, containerID string) (*lifecycle.ContainerStatus, error) {
	resp, err := r.rs.ContainerStatus(ctx, containerID, false)
	if err != nil {
		return nil, notFound(err, "container", containerID)
	}
	if resp.GetStatus() == nil {
		return nil, notFound(fmt.Errorf("no status"), "container", containerID)
	}
	return containerStatus(resp.GetStatus()), nil
}

// ListContainers reports this runtime's containers (those with LabelManaged and a pod); the
// listing has no exit codes or times but creation, so each is asked for its status.
func (r *Runtime) ListContainers(ctx context.Context) ([]*lifecycle.ContainerStatus, error) {
	list, err := r.listContainers(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*lifecycle.ContainerStatus, 0, len(list))
	for _, c := range list {
		resp, err := r.rs.ContainerStatus(ctx, c.GetId(), false)
		if err != nil || resp.GetStatus() == nil {
			continue // removed meanwhile
		}
		st := containerStatus(resp.GetStatus())
		st.SandboxID = c.GetPodSandboxId()
		out = append(out, st)
	}
	return out, nil
}

// listContainers lists this runtime's containers as CRI does.
func (r *Runtime) listContainers(ctx context.Context) ([]*runtimeapi.Container, error) {
	list, err := r.rs.ListContainers(ctx, &runtimeapi.ContainerFilter{LabelSelector: map[string]string{LabelManaged: "true"}})
	if err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	out := list[:0]
	for _, c := range list {
		if c.GetLabels()[lifecycle.LabelPodUID] != "" {
			out = append(out, c)
		}
	}
	return out, nil
}

// containerStatus maps a CRI container status to the lifecycle's. The sandbox ID is not in a
// CRI status; ListContainers fills it in, and ContainerStatus's callers know it.
func containerStatus(s *runtimeapi.ContainerStatus) *lifecycle.ContainerStatus {
	st := &lifecycle.ContainerStatus{
		ID: s.GetId(), Name: s.GetMetadata().GetName(), Attempt: s.GetMetadata().GetAttempt(),
		State: containerState(s.GetState()), CreatedAt: nsTime(s.GetCreatedAt()),
		StartedAt: nsTime(s.GetStartedAt()), FinishedAt: nsTime(s.GetFinishedAt()),
		ExitCode: s.GetExitCode(), Reason: s.GetReason(), Message: s.GetMessage(),
		LogPath: s.GetLogPath(), ImageRef: s.GetImageRef(), Labels: ownLabels(s.GetLabels()),
	}
	if st.Reason == "Completed" || st.Reason == "Error" {
		// containerd's reasons for an ordinary exit, which the exit code says already;
		// "StartError" and "OOMKilled" stay.
		st.Reason = ""
	}
	return st
}

func containerState(s runtimeapi.ContainerState) lifecycle.ContainerState {
	switch s {
	case runtimeapi.ContainerState_CONTAINER_CREATED:
		return lifecycle.ContainerCreated
	case runtimeapi.ContainerState_CONTAINER_RUNNING:
		return lifecycle.ContainerRunning
	case runtimeapi.ContainerState_CONTAINER_EXITED:
		return lifecycle.ContainerExited
	}
	return lifecycle.ContainerUnknown
}

// nsTime is a CRI timestamp (ns since the epoch; 0 unset) as a time.
func nsTime(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}
