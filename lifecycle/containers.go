// One container's life in the pod's sandbox, in the order the reader meets it:
// [Provider.startContainer] brings the container's image ([Provider.ensureImage]), builds its
// config and has the runtime create and start it, as the kubelet's kuberuntime startContainer;
// [Provider.killContainer] and [Provider.stopContainer] stop it; [containerHash] and
// [containerSpec] are its identity. Which containers a sync starts or kills is the [plan]'s.

package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/lifecycle/env"
	"github.com/vk-static/vk-static/lifecycle/probe"
	"github.com/vk-static/vk-static/lifecycle/volume"
	"github.com/vk-static/vk-static/podutil"
	"github.com/vk-static/vk-static/provider"
)

// minimumGrace is the least time a container gets between its stop signal and the kill, the
// kubelet's minimumGracePeriodInSeconds: a preStop hook that used up the grace period leaves
// the process this much.
const minimumGrace = 2 * time.Second

// configError is why a container cannot be created from its spec as it is now; retry tells
// whether it may change (a config map created later) or never will (no command).
type configError struct {
	reason string
	err    error
	retry  bool
}

func (e *configError) Error() string { return e.err.Error() }
func (e *configError) Unwrap() error { return e.err }

// startContainer creates and starts a new instance of c: its first, or a restart. A
// configuration error leaves the container waiting with the reason; a start error leaves the
// instance exited (StartError) for the restart policy.
func (p *Provider) startContainer(ctx context.Context, uid types.UID, c *corev1.Container) {
	logger := klog.FromContext(ctx).WithValues("container", c.Name)
	p.mu.Lock()
	st, ok := p.pods[uid]
	if !ok {
		p.mu.Unlock()
		return
	}
	// Created with what the node allocated, never with a resize not yet admitted ([Provider.allocateResizeLocked]).
	pod, sandboxID, vols, facts := st.allocatedPod(), st.sandboxID, st.volumes, p.factsLocked(st)
	c = st.allocatedContainer(c)
	rec := st.containers[c.Name]
	if rec == nil {
		rec = &containerRecord{}
		st.containers[c.Name] = rec
	}
	attempt := uint32(0)
	if rec.current != nil {
		attempt = rec.current.Attempt + 1
	}
	ephemeral := isEphemeral(pod, c.Name)
	var targetID string
	var targetErr error
	if ephemeral {
		if err := p.admitEphemeral(pod, c.Name); err != nil {
			// Final: the runtime will not run it; the rest of the pod runs on.
			st.waiting[c.Name] = waitingReason{reason: reasonEphemeralNotSupported, message: err.Error(), final: true}
			p.mu.Unlock()
			p.cfg.Recorder.Eventf(pod, corev1.EventTypeWarning, "Failed", "Error: %v", err)
			logger.V(2).Info("Cannot run the ephemeral container", "err", err)
			return
		}
		targetID, targetErr = ephemeralTarget(st, c.Name)
	}
	p.mu.Unlock()

	imageRef, ok := p.ensureImage(ctx, uid, pod, c)
	if !ok {
		return
	}
	cfg, err := p.containerConfig(ctx, pod, c, vols, facts, attempt)
	if err == nil && targetErr != nil {
		err = targetErr
	}
	if err == nil {
		err = p.verifyRunAsNonRoot(ctx, pod, c)
	}
	if err != nil {
		var ce *configError
		if !errors.As(err, &ce) {
			ce = &configError{reason: reasonConfigError, err: err, retry: true}
		}
		p.mu.Lock()
		st.waiting[c.Name] = waitingReason{reason: ce.reason, message: ce.Error(), final: !ce.retry}
		if ce.retry {
			p.wakeLocked(uid, p.cfg.Clock.Now().Add(retryAfter))
		}
		p.mu.Unlock()
		p.cfg.Recorder.Eventf(pod, corev1.EventTypeWarning, "Failed", "Error: %v", ce)
		logger.V(2).Info("Cannot create the container", "reason", ce.reason, "err", ce)
		return
	}
	cfg.ImageRef = imageRef
	cfg.TargetContainerID = targetID
	id, err := p.rt.CreateContainer(ctx, sandboxID, cfg)
	if err != nil {
		p.mu.Lock()
		st.waiting[c.Name] = waitingReason{reason: "CreateContainerError", message: err.Error()}
		p.wakeLocked(uid, p.cfg.Clock.Now().Add(retryAfter))
		p.mu.Unlock()
		p.cfg.Recorder.Eventf(pod, corev1.EventTypeWarning, "Failed", "Error: %v", err)
		return
	}

	p.linkContainerLog(ctx, pod, c.Name, id, cfg.LogPath)
	p.mu.Lock()
	delete(st.waiting, c.Name)
	stale := rec.previous
	if rec.current != nil {
		// A restart: the instance that follows waits out the next delay after it exits. The
		// restart is recorded now, when the new instance is created, so a container that runs
		// backoffReset before it exits again starts over at the initial delay.
		rec.backoff = p.restarts.Next(containerKey{uid: uid, name: c.Name}, rec.current.FinishedAt)
		rec.previous = rec.current
		rec.restarts++
	} else {
		stale = nil
	}
	rec.current = &ContainerStatus{ID: id, SandboxID: sandboxID, Name: c.Name, Attempt: attempt, State: ContainerCreated,
		CreatedAt: p.cfg.Clock.Now(), LogPath: cfg.LogPath, ImageRef: imageRef, Labels: cfg.Labels}
	rec.exited = make(chan struct{})
	rec.started, rec.ready, rec.unhealthy, rec.hookFailed = false, false, false, false
	rec.startSeen, rec.watched = false, false
	rec.resizeRestart = false
	p.setActuatedLocked(st, c.Name, c.Resources)
	p.mu.Unlock()
	if stale != nil {
		// The kubelet keeps one dead instance per container, for lastState and --previous.
		if err := p.removeContainer(ctx, stale); err != nil {
			// Not forgotten: the pod's next syncs try again ([Provider.removeLeftovers]).
			logger.Error(err, "Removing an old container instance; tried again", "containerID", stale.ID)
			p.mu.Lock()
			p.addLeftoverLocked(uid, stale)
			p.mu.Unlock()
		}
		os.Remove(p.terminationMessageFile(uid, c.Name, stale.Attempt))
	}

	startErr := p.rt.StartContainer(ctx, id)
	if cs, err := p.rt.ContainerStatus(ctx, id); err == nil {
		p.addTerminationMessage(ctx, pod, c.Name, cs)
		p.mu.Lock()
		p.observeLocked(uid, cs)
		p.mu.Unlock()
	}
	if startErr != nil {
		p.cfg.Recorder.Eventf(pod, corev1.EventTypeWarning, "Failed", "Error: %v", startErr)
		logger.V(2).Info("The container did not start", "err", startErr)
		return
	}

	p.mu.Lock()
	rec.started = c.StartupProbe == nil
	rec.ready = rec.started && c.ReadinessProbe == nil
	rec.everStarted = rec.everStarted || (rec.started && rec.running())
	startedAt := p.cfg.Clock.Now()
	if rec.current.ID == id && !rec.current.StartedAt.IsZero() {
		startedAt = rec.current.StartedAt
	}
	target := p.targetLocked(st, c, id)
	p.mu.Unlock()
	p.probes.Add(ctx, uid, c, id, startedAt, target)

	if c.Lifecycle != nil && c.Lifecycle.PostStart != nil {
		if msg, err := probe.RunHook(ctx, p.cfg.Clock, c.Lifecycle.PostStart, target); err != nil {
			p.cfg.Recorder.Event(pod, corev1.EventTypeWarning, "FailedPostStartHook", msg)
			p.mu.Lock()
			rec.hookFailed = true
			p.mu.Unlock()
			p.killContainer(ctx, uid, c.Name, "FailedPostStartHook")
		}
	}
}

// The container's image, which startContainer brings first.

// containerConfig is everything the runtime needs to create an instance of c.
func (p *Provider) containerConfig(ctx context.Context, pod *corev1.Pod, c *corev1.Container, vols volume.Volumes, facts env.PodFacts, attempt uint32) (*ContainerConfig, error) {
	serviceEnv, err := p.serviceEnv(ctx, pod)
	if err != nil {
		return nil, err
	}
	facts.ServiceEnv = serviceEnv
	res, err := env.Build(ctx, pod, c, facts, p.objects(pod))
	if err != nil {
		return nil, err
	}
	for _, skipped := range res.SkippedKeys {
		p.cfg.Recorder.Event(pod, corev1.EventTypeWarning, env.InvalidEnvironmentVariableNamesReason, skipped.Message())
	}
	command, args := env.Command(c, res.Env)
	if _, runsImages := p.rt.(ImageService); len(command) == 0 && !runsImages {
		return nil, &configError{reason: reasonNoCommand,
			err: fmt.Errorf("container %q has no command: this node runs commands, not images, and does not know the image's entrypoint; set command", c.Name)}
	}
	lookup := map[string]string{}
	for _, v := range res.Env {
		lookup[v.Name] = v.Value
	}
	mounts, err := p.volumes.Mounts(pod, c, vols, func(s string) string {
		return env.Expand(s, func(name string) (string, bool) { v, ok := lookup[name]; return v, ok })
	})
	if err != nil {
		return nil, err
	}
	user, err := containerUser(pod, c)
	if err != nil {
		return nil, err
	}
	cfg := &ContainerConfig{
		Name:       c.Name,
		Attempt:    attempt,
		Image:      c.Image,
		Command:    command,
		Args:       args,
		Env:        res.Strings(),
		WorkingDir: c.WorkingDir,
		User:       user,
		Stdin:      c.Stdin,
		StdinOnce:  c.StdinOnce,
		TTY:        c.TTY,
		LogPath:    p.logPath(pod, c.Name, attempt),
		StopSignal: stopSignal(c),
		Labels: map[string]string{
			LabelPodUID: string(pod.UID), LabelPodName: pod.Name, LabelPodNamespace: pod.Namespace, LabelContainerName: c.Name,
			LabelContainerHash: containerHash(c),
		},
		Pod:       pod,
		Container: c,
	}
	for _, m := range mounts {
		cfg.Mounts = append(cfg.Mounts, Mount{HostPath: m.HostPath, ContainerPath: m.ContainerPath, ReadOnly: m.ReadOnly})
	}
	if m, ok := p.terminationMessageMount(ctx, pod, c, attempt); ok {
		cfg.Mounts = append(cfg.Mounts, m)
	}
	if m, ok, err := p.hostsMount(pod, c, facts.PodIPs); err != nil {
		return nil, err
	} else if ok {
		cfg.Mounts = append(cfg.Mounts, m)
	}
	return cfg, nil
}

// containerUser is who runs c: its securityContext over the pod's; nil when neither names a
// user or group (the runtime decides). UID -1 is "the runtime's default user" with a group
// given. runAsNonRoot with user 0 is refused, as the kubelet does.
func containerUser(pod *corev1.Pod, c *corev1.Container) (*User, error) {
	var uid, gid *int64
	var nonRoot *bool
	var groups []int64
	if psc := pod.Spec.SecurityContext; psc != nil {
		uid, gid, nonRoot, groups = psc.RunAsUser, psc.RunAsGroup, psc.RunAsNonRoot, psc.SupplementalGroups
	}
	if sc := c.SecurityContext; sc != nil {
		if sc.RunAsUser != nil {
			uid = sc.RunAsUser
		}
		if sc.RunAsGroup != nil {
			gid = sc.RunAsGroup
		}
		if sc.RunAsNonRoot != nil {
			nonRoot = sc.RunAsNonRoot
		}
	}
	if nonRoot != nil && *nonRoot && uid != nil && *uid == 0 {
		return nil, &configError{reason: reasonConfigError, err: fmt.Errorf("container's runAsUser breaks non-root policy (pod: %q, container: %s)", // the kubelet's
			probe.FormatPod(pod.Name, pod.Namespace, pod.UID), c.Name)}
	}
	if uid == nil && gid == nil && len(groups) == 0 {
		return nil, nil
	}
	u := &User{UID: -1, GID: -1, SupplementalGroups: groups}
	if uid != nil {
		u.UID = *uid
	}
	if gid != nil {
		u.GID = *gid
	}
	return u, nil
}

// killContainer stops a running container of the pod for reason (a failed liveness probe, a
// failed postStart hook, a completed pod's sidecar): preStop, then the stop signal, then a kill
// at the end of its grace period. The restart policy decides what follows.
func (p *Provider) killContainer(ctx context.Context, uid types.UID, name, reason string) {
	p.mu.Lock()
	st, ok := p.pods[uid]
	if !ok || !st.containers[name].running() {
		p.mu.Unlock()
		return
	}
	pod := st.pod
	c := containerSpec(pod, name)
	rec := st.containers[name]
	id := rec.current.ID
	target := p.targetLocked(st, c, id)
	p.mu.Unlock()

	grace := podutil.GracePeriod(pod)
	if pod.DeletionGracePeriodSeconds == nil && reason == "Unhealthy" {
		grace = probeGrace(c, grace)
	}
	message := fmt.Sprintf("Stopping container %s", name)
	switch reason {
	case "Unhealthy":
		message = fmt.Sprintf("Container %s failed a probe, will be restarted", name)
	case reasonResizeRestart:
		message = fmt.Sprintf("Container %s resize requires restart", name) // the kubelet's
	}
	p.cfg.Recorder.Event(pod, corev1.EventTypeNormal, "Killing", message)
	p.stopContainer(ctx, pod, c, id, target, p.cfg.Clock.Now().Add(grace))
}

// stopContainer runs c's preStop hook and stops instance id, all by deadline.
func (p *Provider) stopContainer(ctx context.Context, pod *corev1.Pod, c *corev1.Container, id string, target probe.Target, deadline time.Time) {
	if c != nil && c.Lifecycle != nil && c.Lifecycle.PreStop != nil {
		hookCtx, cancel := context.WithDeadline(ctx, deadline)
		if msg, err := probe.RunHook(hookCtx, p.cfg.Clock, c.Lifecycle.PreStop, target); err != nil {
			p.cfg.Recorder.Event(pod, corev1.EventTypeWarning, "FailedPreStopHook", msg)
		}
		cancel()
	}
	grace := max(deadline.Sub(p.cfg.Clock.Now()), minimumGrace)
	if err := p.rt.StopContainer(ctx, id, grace); err != nil && !provider.IsNotFound(err) {
		klog.FromContext(ctx).Error(err, "Stopping a container", "container", c.Name, "containerID", id)
	}
	if cs, err := p.rt.ContainerStatus(ctx, id); err == nil {
		if c != nil {
			p.addTerminationMessage(ctx, pod, c.Name, cs)
		}
		p.mu.Lock()
		p.observeLocked(pod.UID, cs)
		p.mu.Unlock()
	}
}

// containerHash identifies what of a container's spec, once changed, restarts it: its name and
// image, as the kubelet's hash since 1.31 (an API pod's other container fields cannot change).
func containerHash(c *corev1.Container) string {
	h := fnv.New32a()
	h.Write([]byte(c.Name + "\x00" + c.Image))
	return strconv.FormatUint(uint64(h.Sum32()), 16)
}

// specChanged reports whether rec's current instance was made from another spec than c.
func specChanged(c *corev1.Container, rec *containerRecord) bool {
	if rec == nil || rec.current == nil {
		return false
	}
	hash, ok := rec.current.Labels[LabelContainerHash]
	return ok && hash != containerHash(c)
}

// containerSpec finds a container (init, main or ephemeral) by name; an ephemeral one is a
// copy, as a Container.
func containerSpec(pod *corev1.Pod, name string) *corev1.Container {
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == name {
			return &pod.Spec.InitContainers[i]
		}
	}
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			return &pod.Spec.Containers[i]
		}
	}
	c, _, _ := ephemeralSpec(pod, name)
	return c
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
