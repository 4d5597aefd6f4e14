package lifecycle

import (
	"context"
	"os"
	"strings"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/vk-static/vk-static/lifecycle/env"
	"github.com/vk-static/vk-static/lifecycle/probe"
	"github.com/vk-static/vk-static/podutil"
)

// admitLocked refuses a pod the kubelet refuses (kubeletAdmit, nodeAdmitLocked), or that the
// runtime may not run as it is written, or that asks for what the lifecycle does not do; the
// message names the field. A critical pod that fits once others stop gets those others, to
// preempt before it starts.
func (p *Provider) admitLocked(ctx context.Context, pod *corev1.Pod) ([]*corev1.Pod, error) {
	if err := p.kubeletAdmit(pod); err != nil {
		return nil, err
	}
	victims, err := p.nodeAdmitLocked(ctx, pod)
	if err != nil {
		return nil, err
	}
	// Ephemeral containers are not refused here: they arrive on a running pod, and each is
	// admitted on its own before it starts (ephemeral.go).
	return victims, p.rt.Admit(pod)
}

func (p *Provider) statusInput(st *podState) statusInput {
	return statusInput{runtimeName: p.cfg.RuntimeName, hostIPs: p.cfg.NodeIPs, podIPs: p.podIPsLocked(st), now: metaNow(p.cfg.Clock)}
}

// podIPsLocked are the pod's addresses, as the kubelet reports them: a pod on the host's
// network has the node's; a pod on a network of its own has its sandbox's, and none until the
// sandbox exists — never the node's meanwhile, which the API server would then hold beside
// the sandbox's (two addresses of one family: every later status write refused). A sandbox
// that reports none is on the host's network after all (a runtime of host processes): the
// node's.
func (p *Provider) podIPsLocked(st *podState) []string {
	switch {
	case st.pod.Spec.HostNetwork:
		return p.cfg.NodeIPs
	case st.sandboxID == "":
		return nil
	case len(st.podIPs) > 0:
		return st.podIPs
	}
	return p.cfg.NodeIPs
}

// podIP is the pod's first address now, "" while it has none: what probes and hooks reach
// when their action names no host (the kubelet's status.podIP).
func (p *Provider) podIP(uid types.UID) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	st, ok := p.pods[uid]
	if !ok {
		return ""
	}
	if ips := p.podIPsLocked(st); len(ips) > 0 {
		return ips[0]
	}
	return ""
}

// factsLocked is what the downward API reads that the pod object does not hold.
func (p *Provider) factsLocked(st *podState) env.PodFacts {
	f := env.PodFacts{HostIPs: p.cfg.NodeIPs, PodIPs: p.podIPsLocked(st), Allocatable: p.cfg.Allocatable, VolumeDirs: st.volumes}
	if len(f.HostIPs) > 0 {
		f.HostIP = f.HostIPs[0]
	}
	if len(f.PodIPs) > 0 {
		f.PodIP = f.PodIPs[0]
	}
	return f
}

// targetLocked is how probes and hooks reach instance id of c: httpGet and tcpSocket actions
// that name no host go to the pod's address as it is when they run, so that a target made
// before the address was known reaches it once it is.
func (p *Provider) targetLocked(st *podState, c *corev1.Container, id string) probe.Target {
	uid := st.pod.UID
	t := probe.Target{
		PodIP:        func() string { return p.podIP(uid) },
		Pod:          probe.FormatPod(st.pod.Name, st.pod.Namespace, st.pod.UID),
		PodNamespace: st.pod.Namespace,
		PodName:      st.pod.Name,
		Container:    c.Name,
		Ports:        c.Ports,
		Env:          c.Env,
		Exec: func(ctx context.Context, cmd []string) ([]byte, int, error) {
			return p.execCapture(ctx, id, cmd)
		},
		Warn: func(reason, message string) {
			p.cfg.Recorder.Event(st.pod, corev1.EventTypeWarning, reason, message)
		},
	}
	return t
}

// onProbe takes a probe's new result for a container instance.
func (p *Provider) onProbe(u probe.Update) {
	p.mu.Lock()
	defer p.mu.Unlock()
	st, ok := p.pods[u.PodUID]
	if !ok {
		return
	}
	rec := st.containers[u.Container]
	if rec == nil || rec.current == nil || rec.current.ID != u.Instance {
		return // an instance that has been replaced
	}
	switch u.Kind {
	case probe.Startup:
		rec.started = u.Result == probe.Success
		rec.everStarted = rec.everStarted || (rec.started && rec.running())
		rec.unhealthy = rec.unhealthy || u.Result == probe.Failure
		c := containerSpec(st.pod, u.Container)
		rec.ready = rec.started && c != nil && c.ReadinessProbe == nil
	case probe.Liveness:
		rec.unhealthy = rec.unhealthy || u.Result == probe.Failure
	case probe.Readiness:
		rec.ready = rec.started && u.Result == probe.Success
	}
	p.kickLocked(u.PodUID)
}

// onProbeEvent records a probe attempt the kubelet reports as a Warning event (every failure).
func (p *Provider) onProbeEvent(e probe.Event) {
	p.mu.Lock()
	var pod *corev1.Pod
	if st, ok := p.pods[e.PodUID]; ok {
		pod = st.pod
	}
	p.mu.Unlock()
	if pod != nil {
		p.cfg.Recorder.Event(pod, corev1.EventTypeWarning, e.Reason, e.Message)
	}
}

// stopSignal is the container's lifecycle.stopSignal as a signal number; 0 for the default.
func stopSignal(c *corev1.Container) int {
	if c.Lifecycle == nil || c.Lifecycle.StopSignal == nil {
		return 0
	}
	switch strings.TrimPrefix(string(*c.Lifecycle.StopSignal), "SIG") {
	case "HUP":
		return int(syscall.SIGHUP)
	case "INT":
		return int(syscall.SIGINT)
	case "QUIT":
		return int(syscall.SIGQUIT)
	case "KILL":
		return int(syscall.SIGKILL)
	case "USR1":
		return int(syscall.SIGUSR1)
	case "USR2":
		return int(syscall.SIGUSR2)
	case "WINCH":
		return int(syscall.SIGWINCH)
	}
	return 0 // SIGTERM, the default
}

// canMount reports whether this process may mount (tmpfs for memory-backed emptyDirs): root.
func canMount() bool { return os.Geteuid() == 0 }

// forgetLocked drops every trace of the pod in memory.
func (p *Provider) forgetLocked(uid types.UID) {
	st, ok := p.pods[uid]
	if !ok {
		return
	}
	delete(p.pods, uid)
	if key := podutil.FullName(st.pod); p.byName[key] == uid {
		delete(p.byName, key)
	}
	delete(p.workers, uid)
	delete(p.podFiles, uid)
	p.retryDeferredResizesLocked(uid) // what it held may let a deferred resize fit
	for name, rec := range st.containers {
		rec.closeExited()
		p.restarts.Reset(containerKey{uid: uid, name: name})
	}
	for image := range st.imagePulls {
		p.imagePulls.Reset(imageKey{uid: uid, image: image})
	}
}

func metaNow(c clock.PassiveClock) metav1.Time { return metav1.NewTime(c.Now()) }

// hasLimits reports whether any container of pod sets resource limits, which this lifecycle does
// not enforce (no cgroups).
func hasLimits(pod *corev1.Pod) bool {
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			if len(c.Resources.Limits) > 0 {
				return true
			}
		}
	}
	return pod.Spec.Resources != nil && len(pod.Spec.Resources.Limits) > 0
}
