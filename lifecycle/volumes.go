package lifecycle

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
)

// setupVolumes makes the pod's volumes exist; until they do, its containers wait in
// ContainerCreating and a FailedMount event says why (the kubelet's behaviour), and it is
// tried again after retryAfter.
func (p *Provider) setupVolumes(ctx context.Context, uid types.UID) bool {
	p.mu.Lock()
	st, ok := p.pods[uid]
	if !ok {
		p.mu.Unlock()
		return false
	}
	pod, facts := st.pod, p.factsLocked(st)
	p.mu.Unlock()

	vols, warnings, err := p.volumes.Setup(ctx, pod, facts, p.cfg.Allocatable)
	for _, w := range warnings {
		p.cfg.Recorder.Event(pod, corev1.EventTypeWarning, "VolumeWarning", w)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		p.cfg.Recorder.Eventf(pod, corev1.EventTypeWarning, "FailedMount", "%v", err)
		klog.FromContext(ctx).V(2).Info("Volumes not ready", "err", err)
		p.wakeLocked(uid, p.cfg.Clock.Now().Add(retryAfter))
		return false
	}
	st.volumes, st.volumesReady, st.volumesRefreshed = vols, true, p.cfg.Clock.Now()
	p.wakeLocked(uid, st.volumesRefreshed.Add(p.cfg.VolumeRefresh))
	return true
}

// refreshVolumes brings the pod's config map, secret and downward API volumes up to date once
// per VolumeRefresh, as the kubelet does on its periodic pod sync.
func (p *Provider) refreshVolumes(ctx context.Context, uid types.UID) {
	p.mu.Lock()
	st, ok := p.pods[uid]
	if !ok || !hasRefreshedVolumes(st.pod) {
		p.mu.Unlock()
		return
	}
	now := p.cfg.Clock.Now()
	due := st.volumesRefreshed.Add(p.cfg.VolumeRefresh)
	if now.Before(due) {
		p.wakeLocked(uid, due)
		p.mu.Unlock()
		return
	}
	pod, facts := st.pod, p.factsLocked(st)
	p.mu.Unlock()

	if _, err := p.volumes.Refresh(ctx, pod, facts, p.cfg.Allocatable); err != nil {
		p.cfg.Recorder.Eventf(pod, corev1.EventTypeWarning, "FailedMount", "%v", err)
	}
	p.mu.Lock()
	if st.pod == pod { // else an update came meanwhile: refresh again (volumerefresh.go)
		st.volumesRefreshed = now
	}
	p.wakeLocked(uid, now.Add(p.cfg.VolumeRefresh))
	p.mu.Unlock()
}

// hasRefreshedVolumes reports whether the pod has volumes whose content can change.
func hasRefreshedVolumes(pod *corev1.Pod) bool {
	for _, v := range pod.Spec.Volumes {
		if v.ConfigMap != nil || v.Secret != nil || v.DownwardAPI != nil || v.Projected != nil {
			return true
		}
	}
	return false
}

// runSandbox creates the pod's sandbox.
func (p *Provider) runSandbox(ctx context.Context, uid types.UID) bool {
	p.mu.Lock()
	st, ok := p.pods[uid]
	if !ok {
		p.mu.Unlock()
		return false
	}
	pod := st.pod
	p.mu.Unlock()

	cfg := sandboxConfig(pod, p.podLogDir(uid))
	hostname, err := kernelHostname(pod, p.cfg.ClusterDomain)
	var id string
	if err == nil {
		cfg.Hostname = hostname
		id, err = p.rt.RunSandbox(ctx, cfg)
	}
	var ips []string
	var unremoved string
	if err == nil && !pod.Spec.HostNetwork {
		if ips, err = p.sandboxIPs(ctx, id); err != nil {
			// A sandbox whose addresses are unknown would give the pod the node's (see
			// podIPsLocked): it goes, and the next try makes another.
			if rerr := p.dropSandbox(ctx, id); rerr != nil {
				// Not forgotten: the pod's next syncs try again (leftovers.go).
				klog.FromContext(ctx).Error(rerr, "Removing a sandbox whose addresses are unknown; tried again", "sandboxID", id)
				unremoved = id
			}
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if unremoved != "" {
		st.leftovers.sandboxes = append(st.leftovers.sandboxes, unremoved)
	}
	if err != nil {
		p.cfg.Recorder.Eventf(pod, corev1.EventTypeWarning, "FailedCreatePodSandBox", "Failed to create pod sandbox: %v", err)
		p.wakeLocked(uid, p.cfg.Clock.Now().Add(retryAfter))
		return false
	}
	st.sandboxID, st.podIPs = id, ips
	return true
}

// sandboxIPs are the addresses the runtime gave a sandbox on the pod network: none from a
// runtime whose pods share the host's network. An error when the runtime cannot say.
func (p *Provider) sandboxIPs(ctx context.Context, id string) ([]string, error) {
	sandboxes, err := p.rt.ListSandboxes(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the addresses of sandbox %s: %w", id, err)
	}
	for _, sb := range sandboxes {
		if sb.ID == id {
			return sb.IPs, nil
		}
	}
	return nil, fmt.Errorf("reading the addresses of sandbox %s: the runtime does not list it", id)
}

func sandboxConfig(pod *corev1.Pod, logDir string) *SandboxConfig {
	cfg := &SandboxConfig{
		PodUID: pod.UID, Namespace: pod.Namespace, Name: pod.Name,
		Hostname: podHostname(pod), HostNetwork: pod.Spec.HostNetwork,
		Labels:       map[string]string{LabelPodUID: string(pod.UID), LabelPodName: pod.Name, LabelPodNamespace: pod.Namespace},
		LogDirectory: logDir,
		Pod:          pod,
	}
	for _, c := range pod.Spec.Containers {
		for _, port := range c.Ports {
			cfg.Ports = append(cfg.Ports, PortMapping{Protocol: string(port.Protocol), ContainerPort: port.ContainerPort, HostPort: port.HostPort, HostIP: port.HostIP})
		}
	}
	return cfg
}
