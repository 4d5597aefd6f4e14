// sync.go holds one sync of a pod, in the order syncPod meets it: the pod worker that runs it
// (kicks and wakes); syncPod itself; what it reads first (the runtime's word on the pod's
// containers, the active deadline) and its way out for a pod not syncing (syncTerminating);
// then the pass, as the kubelet's SyncPod: the pod's volumes, its sandbox, and the plan of
// which containers to kill and start. Starting and stopping one container is containers.go's;
// the status the pass reports is status.go's.

package lifecycle

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/vk-static/vk-static/backoff"
	"github.com/vk-static/vk-static/lifecycle/dns"
	"github.com/vk-static/vk-static/podutil"
	"github.com/vk-static/vk-static/provider"
)

// podWorker syncs one pod, one sync at a time, whenever something about it changed (a call, a
// container event, a probe result) or a timer it set fires (a back-off ending, the active
// deadline, the volume refresh). Kicks while a sync runs coalesce into one more sync; nothing
// polls. It is the kubelet's pod worker: a pod's slow stop (its grace period) holds up no other.
type podWorker struct {
	kick    chan struct{}
	timer   clock.Timer // the next wake, nil for none
	due     time.Time
	running bool // its goroutine has started
}

// startWorkerLocked gives uid a worker, started once Run has, and kicks it.
func (p *Provider) startWorkerLocked(uid types.UID) {
	w, ok := p.workers[uid]
	if !ok {
		w = &podWorker{kick: make(chan struct{}, 1)}
		p.workers[uid] = w
	}
	if !w.running && p.runCtx != nil {
		w.running = true
		ctx := p.runCtx
		p.wg.Go(func() { p.runWorker(ctx, uid, w) })
	}
	w.poke()
}

func (w *podWorker) poke() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// kickLocked makes uid's worker sync again soon.
func (p *Provider) kickLocked(uid types.UID) {
	if w, ok := p.workers[uid]; ok {
		w.poke()
	}
}

func (p *Provider) kick(uid types.UID) {
	p.mu.Lock()
	p.kickLocked(uid)
	p.mu.Unlock()
}

// wakeLocked makes uid's worker sync at at (or earlier, if already due earlier).
func (p *Provider) wakeLocked(uid types.UID, at time.Time) {
	w, ok := p.workers[uid]
	if !ok || at.IsZero() {
		return
	}
	if w.timer != nil && !w.due.IsZero() && !at.Before(w.due) && w.due.After(p.cfg.Clock.Now()) {
		return // an earlier wake is set
	}
	if w.timer != nil {
		w.timer.Stop()
	}
	w.due = at
	w.timer = p.cfg.Clock.AfterFunc(max(at.Sub(p.cfg.Clock.Now()), 0), w.poke)
}

// runWorker syncs uid until the pod is forgotten or ctx ends.
func (p *Provider) runWorker(ctx context.Context, uid types.UID, w *podWorker) {
	defer func() {
		p.mu.Lock()
		if w.timer != nil {
			w.timer.Stop()
		}
		p.mu.Unlock()
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.kick:
		}
		if forgotten := p.syncPod(ctx, uid); forgotten {
			return
		}
	}
}

// retryAfter is when a step that failed for a reason outside the pod (a volume whose config
// map is missing, a sandbox the runtime could not create) is tried again.
const retryAfter = 10 * time.Second

// syncPod brings one pod a step closer to what it should be and reports its status, as its
// work state says (state.go): in podSyncing the plan's containers are started (below); any
// other state is syncTerminating's. It returns true once the pod has been stopped for good and
// forgotten; a deleted pod that could not be cleaned up yet stays, and its worker tries again
// when the back-off wakes it.
func (p *Provider) syncPod(ctx context.Context, uid types.UID) (forgotten bool) {
	_ = p.removeLeftovers(ctx, uid) // logged, and tried again
	p.refreshContainers(ctx, uid)

	p.mu.Lock()
	st, ok := p.pods[uid]
	if !ok {
		p.mu.Unlock()
		return true
	}
	now := p.cfg.Clock.Now()
	logger := klog.FromContext(ctx).WithValues("pod", klog.KObj(st.pod), "podUID", uid)
	ctx = klog.NewContext(ctx, logger)
	if !st.deleting && st.refused == "" {
		p.checkActiveDeadlineLocked(uid, st, now)
	}
	if st.workState() != podSyncing {
		return p.syncTerminating(ctx, uid, st)
	}
	p.allocateResizeLocked(ctx, uid, st) // a resize is decided before anything is created
	needVolumes, needSandbox := !st.volumesReady, st.sandboxID == ""
	p.mu.Unlock()

	if needVolumes && !p.setupVolumes(ctx, uid) {
		p.publish(uid)
		return false
	}
	if needSandbox && !p.runSandbox(ctx, uid) {
		p.publish(uid)
		return false
	}
	if !needVolumes {
		p.refreshVolumes(ctx, uid)
	}

	p.actuateResize(ctx, uid)

	p.mu.Lock()
	pl := planPod(st, now)
	if pl.initFailed && len(pl.kill) == 0 {
		logger.V(2).Info("An init container failed and the pod does not restart: the pod failed")
	}
	pod := st.pod
	p.mu.Unlock()
	for _, name := range pl.backingOff {
		// The kubelet's event on every sync that finds the container in back-off (the
		// recorder aggregates repeats), which kubectl describe shows.
		p.cfg.Recorder.Eventf(pod, corev1.EventTypeWarning, "BackOff", "Back-off restarting failed container %s in pod %s_%s(%s)",
			name, pod.Name, pod.Namespace, pod.UID)
	}
	for _, k := range pl.kill {
		p.killContainer(ctx, uid, k.name, k.reason)
	}
	for _, c := range pl.start {
		if p.isDeleting(uid) {
			break // the next sync stops the pod
		}
		p.startContainer(ctx, uid, c)
		p.publish(uid)
	}

	p.mu.Lock()
	p.wakeLocked(uid, pl.wakeAt)
	p.publishLocked(st)
	p.mu.Unlock()
	return false
}

// Before the pass: the runtime's word on the pod's containers, the active deadline, and the way
// out for a pod that is not syncing.

// refreshContainers asks the runtime about every instance of the pod that had not exited when
// last seen and is not watched (containerRecord): the container events only say that
// something changed.
func (p *Provider) refreshContainers(ctx context.Context, uid types.UID) {
	p.mu.Lock()
	st, ok := p.pods[uid]
	var pod *corev1.Pod
	ids := map[string]string{} // instance ID → container name
	if ok {
		pod = st.pod
		for name, rec := range st.containers {
			if rec.current != nil && rec.current.State != ContainerExited && !rec.watched {
				ids[rec.current.ID] = name
			}
		}
	}
	p.mu.Unlock()
	for id, name := range ids {
		cs, err := p.rt.ContainerStatus(ctx, id)
		if provider.IsNotFound(err) {
			// The runtime lost it (its state removed by hand): it is gone, and the restart
			// policy decides what follows.
			cs = &ContainerStatus{ID: id, State: ContainerExited, ExitCode: 137, Reason: "ContainerMissing",
				Message: "the runtime no longer knows this container", FinishedAt: p.cfg.Clock.Now()}
		} else if err != nil {
			klog.FromContext(ctx).Error(err, "Reading a container's status", "containerID", id)
			continue
		} else {
			p.addTerminationMessage(ctx, pod, name, cs)
		}
		p.mu.Lock()
		p.observeLocked(uid, cs)
		p.mu.Unlock()
	}
}

// observeLocked takes a container's new status from the runtime.
func (p *Provider) observeLocked(uid types.UID, cs *ContainerStatus) {
	st, ok := p.pods[uid]
	if !ok {
		return
	}
	for name, rec := range st.containers {
		if rec.current == nil || rec.current.ID != cs.ID {
			continue
		}
		keep := *cs
		if keep.Labels == nil {
			keep.Labels = rec.current.Labels
		}
		if keep.LogPath == "" {
			keep.LogPath = rec.current.LogPath
		}
		rec.current = &keep
		rec.watched = rec.startSeen && cs.State == ContainerRunning
		if cs.State == ContainerRunning && rec.started {
			rec.everStarted = true
		}
		if cs.State == ContainerExited {
			rec.closeExited()
			p.probes.RemoveInstance(uid, name, cs.ID)
		}
		return
	}
}

// onContainerEvent is the runtime's report that a container changed: its pod's worker looks.
// A Started event makes an instance seen running watched (containerRecord); an Exited event
// ends the watch.
func (p *Provider) onContainerEvent(ev ContainerEvent) {
	uid := types.UID(ev.Labels[LabelPodUID])
	p.mu.Lock()
	if st, ok := p.pods[uid]; ok {
		for _, rec := range st.containers {
			if rec.current != nil && rec.current.ID == ev.ContainerID {
				rec.startSeen = ev.Type == ContainerStartedEvent
				rec.watched = rec.startSeen && rec.current.State == ContainerRunning
			}
		}
	}
	p.mu.Unlock()
	p.kick(uid)
}

func (r *containerRecord) closeExited() {
	if r.exited == nil {
		return
	}
	select {
	case <-r.exited:
	default:
		close(r.exited)
	}
}

// checkActiveDeadlineLocked moves a pod past its activeDeadlineSeconds to podTerminating, and
// wakes its worker when the deadline comes.
func (p *Provider) checkActiveDeadlineLocked(uid types.UID, st *podState, now time.Time) {
	deadline, ok := activeDeadline(st)
	if !ok {
		return
	}
	if !now.Before(deadline) && !st.deadlineExceeded {
		st.deadlineExceeded = true
		p.cfg.Recorder.Event(st.pod, corev1.EventTypeNormal, reasonDeadlineExceeded, messageDeadlineExceeded)
	}
	p.wakeLocked(uid, deadline)
}

// activeDeadline is when the pod's activeDeadlineSeconds runs out, counted from its start.
func activeDeadline(st *podState) (time.Time, bool) {
	ads := st.pod.Spec.ActiveDeadlineSeconds
	if ads == nil || st.startTime.IsZero() {
		return time.Time{}, false
	}
	return st.startTime.Add(time.Duration(*ads) * time.Second), true
}

// syncTerminating is a sync of a pod not in podSyncing, called with p.mu held, which it
// releases: a terminating pod is stopped (the kubelet's SyncTerminatingPod); then a deleted
// pod is cleaned up and forgotten, an evicted one's volumes are released, and the terminal
// status is reported (SyncTerminatedPod). A refused pod, which never ran, is only reported
// until it is deleted. It returns whether the pod was forgotten.
func (p *Provider) syncTerminating(ctx context.Context, uid types.UID, st *podState) (forgotten bool) {
	if st.refused != "" && !st.deleting {
		p.publishLocked(st)
		p.mu.Unlock()
		return false
	}
	stopped, deleting, evicted := st.stopped, st.deleting, st.evicted != ""
	p.mu.Unlock()
	if !stopped {
		p.stopPod(ctx, uid)
	}
	if deleting {
		return p.forget(ctx, uid)
	}
	if evicted {
		p.releaseEvicted(ctx, uid)
	}
	p.publish(uid)
	return false
}

// The pass, step 1: the pod's volumes, set up once and kept fresh.

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
	if st.pod == pod { // else an update came meanwhile: refresh again (refreshVolumesSoonLocked)
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

// refreshVolumesSoonLocked makes the next sync of the pod bring its volumes up to date at
// once, not a VolumeRefresh after the last time: UpdatePod calls it, as the kubelet's syncPod
// for an updated pod has its volume manager process the pod's volumes again (ReprocessPod, and
// a remount of downwardAPI, configMap, secret and projected volumes). So new labels and
// annotations reach downwardAPI files within a sync (the e2e "Downward API volume should
// update labels on modification" and "...annotations..."), not up to a minute later.
//
// refreshVolumes marks a refresh done only when it used the pod that is current when it ends:
// an update that lands while a refresh runs is not lost to it.
func refreshVolumesSoonLocked(st *podState) {
	st.volumesRefreshed = time.Time{}
}

// The pass, step 2: the pod's sandbox, with its hostname and addresses.

// runSandbox creates the pod's sandbox.
func (p *Provider) runSandbox(ctx context.Context, uid types.UID) bool {
	p.mu.Lock()
	st, ok := p.pods[uid]
	if !ok {
		p.mu.Unlock()
		return false
	}
	pod := st.allocatedPod() // the pod's own limits (the process runtime's pod cgroup)
	p.mu.Unlock()

	cfg := sandboxConfig(pod, p.podLogDir(pod))
	hostname, err := kernelHostname(pod, p.cfg.ClusterDomain)
	if err == nil {
		cfg.Hostname = hostname
		cfg.DNS, err = p.podDNS(pod)
	}
	if err == nil {
		cfg.RuntimeHandler, err = p.runtimeHandler(ctx, pod)
	}
	var id string
	if err == nil {
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

// podDNS is pod's resolver configuration (Config.DNS), nil without a configurer; what the
// kubelet warns about as it makes it (cluster DNS missing, limits exceeded) is a Warning event
// on the pod.
func (p *Provider) podDNS(pod *corev1.Pod) (*dns.Config, error) {
	if p.cfg.DNS == nil {
		return nil, nil
	}
	cfg, warnings, err := p.cfg.DNS.PodDNS(pod)
	for _, w := range warnings {
		p.cfg.Recorder.Event(pod, corev1.EventTypeWarning, w.Reason, w.Message)
	}
	return cfg, err
}

// SandboxAddresser is a Runtime that reads one sandbox's addresses without listing every
// sandbox: listing reads each one's record, so that every pod started would cost as many reads
// as there are pods (the process runtime: 100 pods started, 10,000 records read and decoded).
type SandboxAddresser interface {
	// SandboxIPs are the sandbox's addresses on the pod network; an error when it is unknown.
	SandboxIPs(ctx context.Context, id string) ([]string, error)
}

// sandboxIPs are the addresses the runtime gave a sandbox on the pod network: none from a
// runtime whose pods share the host's network. An error when the runtime cannot say.
func (p *Provider) sandboxIPs(ctx context.Context, id string) ([]string, error) {
	if r, ok := p.rt.(SandboxAddresser); ok {
		ips, err := r.SandboxIPs(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("reading the addresses of sandbox %s: %w", id, err)
		}
		return ips, nil
	}
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

// hostnameMaxLen is the longest hostname the kernel takes (sethostname: 64 bytes with the
// terminating NUL); runc fails a longer one with "sethostname: invalid argument".
const hostnameMaxLen = 63

// fqdnMaxLen is the longest setHostnameAsFQDN name the kubelet sets (its GetNodenameForKernel).
const fqdnMaxLen = 64

// podHostname is the hostname of a pod on a network of its own, as the kubelet's
// GeneratePodHostNameAndDomain: spec.hostnameOverride when set, else spec.hostname, else the
// pod's name — cut to 63 characters without a trailing '-' or '.', as the kubelet's
// truncatePodHostnameIfNeeded does (a pod name may be 253 long). The API server has
// validated the fields (a DNS subdomain for the override, a DNS label for hostname), so a
// valid name stays valid once cut.
func podHostname(pod *corev1.Pod) string {
	hostname := pod.Name
	switch {
	case pod.Spec.HostnameOverride != nil && *pod.Spec.HostnameOverride != "":
		hostname = *pod.Spec.HostnameOverride
	case pod.Spec.Hostname != "":
		hostname = pod.Spec.Hostname
	}
	return truncateHostname(hostname)
}

// podDomain is the pod's domain, the kubelet's: "<subdomain>.<namespace>.svc.<clusterDomain>"
// with spec.subdomain, "" without it or with a hostnameOverride (which names the pod whole).
func podDomain(pod *corev1.Pod, clusterDomain string) string {
	if pod.Spec.Subdomain == "" || (pod.Spec.HostnameOverride != nil && *pod.Spec.HostnameOverride != "") {
		return ""
	}
	return fmt.Sprintf("%s.%s.svc.%s", pod.Spec.Subdomain, pod.Namespace, clusterDomain)
}

// kernelHostname is the name the sandbox sets (the kubelet's GetNodenameForKernel): the pod's
// hostname, or with setHostnameAsFQDN and a domain, hostname.domain — an error when that is
// longer than the 64 characters the kubelet allows.
func kernelHostname(pod *corev1.Pod, clusterDomain string) (string, error) {
	hostname, domain := podHostname(pod), podDomain(pod, clusterDomain)
	if domain == "" || pod.Spec.SetHostnameAsFQDN == nil || !*pod.Spec.SetHostnameAsFQDN {
		return hostname, nil
	}
	fqdn := hostname + "." + domain
	if len(fqdn) > fqdnMaxLen {
		return "", fmt.Errorf("failed to construct FQDN from pod hostname and cluster domain, FQDN %s is too long (%d characters is the max, %d characters requested)", fqdn, fqdnMaxLen, len(fqdn))
	}
	return fqdn, nil
}

// truncateHostname cuts hostname to hostnameMaxLen, then trims the '-' and '.' that would end
// it; a name of nothing but those is kept whole (the kubelet refuses it; the runtime will).
func truncateHostname(hostname string) string {
	if len(hostname) <= hostnameMaxLen {
		return hostname
	}
	if cut := strings.TrimRight(hostname[:hostnameMaxLen], "-."); cut != "" {
		return cut
	}
	return hostname
}

// The pass, step 3: the plan — which containers to kill and which to start, decided from the
// pod's state alone; killContainer and startContainer (containers.go) carry it out.

// crashLoop is the restart back-off of the kubelet: the first restart is immediate, then 10 s
// doubling to 5 min; a container that ran at least backoffReset before it exited starts over.
var crashLoop = backoff.Policy{Initial: 10 * time.Second, Max: 5 * time.Minute}

const backoffReset = 10 * time.Minute

// containerKey names a container of a pod for the crash-loop back-off (Provider.restarts).
type containerKey struct {
	uid  types.UID
	name string
}

// plan is what one sync of a pod must do, decided from its state alone (planPod) so that the
// decisions are tested without a runtime.
type plan struct {
	// start lists the containers to create and start now, in order.
	start []*corev1.Container
	// kill lists running containers to stop, with why.
	kill []killAction
	// wakeAt is when the pod must be synced again without an event (a back-off ending); zero
	// for never.
	wakeAt time.Time
	// backingOff lists the exited containers that wait out their restart back-off: each gets
	// the kubelet's BackOff event.
	backingOff []string
	// initFailed: an init container failed and the pod's restart policy is Never: the pod is
	// Failed and nothing more starts.
	initFailed bool
}

type killAction struct {
	name, reason string
}

func (p *plan) wake(at time.Time) {
	if p.wakeAt.IsZero() || at.Before(p.wakeAt) {
		p.wakeAt = at
	}
}

// planPod decides the next actions for a pod that is to run (not refused, not being stopped),
// as the kubelet's computePodActions does: init containers one at a time in order (a sidecar
// counts once it has started), then every main container; exited containers restarted as the
// restart policy says, after their back-off; containers whose liveness probe or postStart hook
// failed killed; sidecars stopped once the main containers have finished for good.
func planPod(st *podState, now time.Time) plan {
	var p plan
	pod := st.pod
	for name, rec := range st.containers {
		if rec.running() && (rec.unhealthy || rec.hookFailed) {
			reason := "Unhealthy"
			if rec.hookFailed {
				reason = "FailedPostStartHook"
			}
			p.kill = append(p.kill, killAction{name: name, reason: reason})
		}
	}

	// Ephemeral containers first, as the kubelet: they may start whatever the init
	// containers do (a debugger for a pod stuck initializing).
	p.planEphemeral(st)

	initDone := true
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		rec := st.containers[c.Name]
		if podutil.IsSidecar(c) {
			switch {
			case st.waiting[c.Name].final:
			case rec == nil || rec.current == nil:
				p.start = append(p.start, c)
			case rec.hasExited() && rec.resizeRestart:
				p.start = append(p.start, c) // stopped for a resize: at once
			case rec.hasExited():
				p.restart(c, rec, now)
			case rec.running() && rec.started:
				continue
			}
			if rec != nil && rec.everStarted {
				continue // a sidecar that started once does not hold up what follows
			}
			initDone = false
			break
		}
		if rec.succeeded() {
			continue
		}
		initDone = false
		switch {
		case st.waiting[c.Name].final:
		case rec == nil || rec.current == nil:
			p.start = append(p.start, c)
		case rec.hasExited():
			if pod.Spec.RestartPolicy == corev1.RestartPolicyNever {
				p.initFailed = true
			} else {
				p.restart(c, rec, now)
			}
		}
		break
	}
	if p.initFailed {
		p.killSidecars(st, "InitFailed")
		return p
	}
	if !initDone {
		return p
	}

	finished := true // every main container exited and will not be restarted
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		rec := st.containers[c.Name]
		switch {
		case st.waiting[c.Name].final:
			finished = false // it never runs: the pod never finishes either
		case rec == nil || rec.current == nil:
			p.start = append(p.start, c)
			finished = false
		case rec.hasExited() && rec.resizeRestart:
			p.start = append(p.start, c) // stopped for a resize: at once, whatever the policy
			finished = false
		case rec.hasExited():
			if restarts(pod, c, rec) || specChanged(c, rec) {
				p.restart(c, rec, now)
				finished = false
			}
		default:
			if rec.running() && specChanged(c, rec) {
				p.kill = append(p.kill, killAction{name: c.Name, reason: "SpecChanged"})
			}
			finished = false
		}
	}
	if finished && len(pod.Spec.Containers) > 0 {
		p.killSidecars(st, "PodCompleted")
	}
	return p
}

// restart starts c again now, or wakes when its back-off ends.
func (p *plan) restart(c *corev1.Container, rec *containerRecord, now time.Time) {
	if until := backoffUntil(rec); now.Before(until) {
		p.wake(until)
		p.backingOff = append(p.backingOff, c.Name)
		return
	}
	p.start = append(p.start, c)
}

func (p *plan) killSidecars(st *podState, reason string) {
	for i := range st.pod.Spec.InitContainers {
		c := &st.pod.Spec.InitContainers[i]
		if podutil.IsSidecar(c) && st.containers[c.Name].running() {
			p.kill = append(p.kill, killAction{name: c.Name, reason: reason})
		}
	}
}

// backoffUntil is when an exited container may start again: its exit plus its back-off, or at
// once after a long run or before the first restart.
func backoffUntil(rec *containerRecord) time.Time {
	cur := rec.current
	if rec.backoff == 0 || ranLongEnough(cur) {
		return time.Time{}
	}
	return cur.FinishedAt.Add(rec.backoff)
}

func ranLongEnough(c *ContainerStatus) bool {
	return !c.StartedAt.IsZero() && c.FinishedAt.Sub(c.StartedAt) >= backoffReset
}

// restarts reports whether an exited main container is started again under the pod's
// restart policy.
func restarts(pod *corev1.Pod, c *corev1.Container, rec *containerRecord) bool {
	switch pod.Spec.RestartPolicy {
	case corev1.RestartPolicyNever:
		return false
	case corev1.RestartPolicyOnFailure:
		return !rec.succeeded()
	}
	return true
}

// isDeleting reports whether the pod is gone or being deleted: syncPod starts nothing more then.
func (p *Provider) isDeleting(uid types.UID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	st, ok := p.pods[uid]
	return !ok || st.deleting
}
