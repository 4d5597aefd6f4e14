// containers.go holds one container's life in the pod's sandbox, in the order the reader meets
// it: startContainer, which first brings the container's image (as the kubelet's
// kuberuntime startContainer does: ensureImage, with the pull back-off and the pull secrets),
// then builds its config and has the runtime create and start it; then killContainer and
// stopContainer, which stop it; and the container's identity (containerHash, containerSpec).
// Which containers a sync starts or kills is the plan's (sync.go).

package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/backoff"
	"github.com/vk-static/vk-static/lifecycle/env"
	"github.com/vk-static/vk-static/lifecycle/image"
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
	// Created with what the node allocated, never with a resize not yet admitted (resize.go).
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
			// Not forgotten: the pod's next syncs try again (leftovers.go).
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

// imagePullBackoff is the kubelet's image pull back-off: 10 s doubling to 5 min per pod and
// image (Provider.imagePulls).
var imagePullBackoff = backoff.Policy{Initial: 10 * time.Second, Max: 5 * time.Minute}

// imageKey names an image of a pod for the pull back-off.
type imageKey struct {
	uid   types.UID
	image string
}

// Image reasons, the kubelet's.
const (
	reasonErrImagePull      = "ErrImagePull"
	reasonImagePullBackOff  = "ImagePullBackOff"
	reasonErrImageNeverPull = "ErrImageNeverPull"
)

// pullBackoff is a failed pull of one image for one pod: why it failed. When it may be tried
// again is Provider.imagePulls'.
type pullBackoff struct {
	err string
}

// ensureImage brings c's image as its pull policy says, before the container is created, and
// returns the image's ID. When it cannot, the container waits with the kubelet's reason
// (ErrImagePull, then ImagePullBackOff until the back-off ends; ErrImageNeverPull) and ok is
// false; the pod is synced again when the back-off ends. A runtime without images needs none:
// ("", true).
func (p *Provider) ensureImage(ctx context.Context, uid types.UID, pod *corev1.Pod, c *corev1.Container) (ref string, ok bool) {
	images, isImageRuntime := p.rt.(ImageService)
	if !isImageRuntime {
		return "", true
	}
	logger := klog.FromContext(ctx).WithValues("container", c.Name, "image", c.Image)
	policy := image.PullPolicy(c)
	if policy != corev1.PullAlways {
		ref, err := images.ImageRef(ctx, c.Image)
		if err != nil {
			p.imageFailed(ctx, uid, pod, c, reasonErrImagePull, fmt.Errorf("inspecting image %q: %w", c.Image, err))
			return "", false
		}
		if ref != "" {
			p.cfg.Recorder.Eventf(pod, corev1.EventTypeNormal, "Pulled", "Container image %q already present on machine", c.Image)
			return ref, true
		}
		if policy == corev1.PullNever {
			msg := fmt.Sprintf("Container image %q is not present with pull policy of Never", c.Image)
			p.mu.Lock()
			if st, ok := p.pods[uid]; ok {
				st.waiting[c.Name] = waitingReason{reason: reasonErrImageNeverPull, message: msg}
				p.wakeLocked(uid, p.cfg.Clock.Now().Add(retryAfter))
			}
			p.mu.Unlock()
			p.cfg.Recorder.Event(pod, corev1.EventTypeWarning, reasonErrImageNeverPull, msg)
			return "", false
		}
	}

	p.mu.Lock()
	st, exists := p.pods[uid]
	if !exists {
		p.mu.Unlock()
		return "", false
	}
	key := imageKey{uid: uid, image: c.Image}
	if b, until := st.imagePulls[c.Image], p.imagePulls.Until(key); b != nil && p.cfg.Clock.Now().Before(until) {
		st.waiting[c.Name] = waitingReason{reason: reasonImagePullBackOff, message: fmt.Sprintf("Back-off pulling image %q: %s", c.Image, b.err)}
		p.wakeLocked(uid, until)
		p.mu.Unlock()
		p.cfg.Recorder.Eventf(pod, corev1.EventTypeNormal, "BackOff", "Back-off pulling image %q", c.Image)
		p.cfg.Recorder.Eventf(pod, corev1.EventTypeWarning, "Failed", "Error: %s", reasonImagePullBackOff)
		return "", false
	}
	p.mu.Unlock()

	creds, err := p.pullCredentials(ctx, pod, c.Image)
	if err != nil {
		p.imageFailed(ctx, uid, pod, c, reasonErrImagePull, err)
		return "", false
	}
	p.cfg.Recorder.Eventf(pod, corev1.EventTypeNormal, "Pulling", "Pulling image %q", c.Image)
	start := p.cfg.Clock.Now()
	sandbox := sandboxConfig(pod, p.podLogDir(pod))
	for i := 0; ; i++ {
		var auth *ImageAuth
		if i < len(creds) {
			cr := creds[i]
			auth = &ImageAuth{Username: cr.Username, Password: cr.Password, Auth: cr.Auth, ServerAddress: cr.Registry}
		}
		ref, err = images.PullImage(ctx, c.Image, auth, sandbox)
		if err == nil || i+1 >= len(creds) {
			break
		}
		logger.V(2).Info("Pulling with a credential failed, trying the next", "registry", creds[i].Registry, "err", err)
	}
	if err != nil {
		p.imageFailed(ctx, uid, pod, c, reasonErrImagePull, fmt.Errorf("failed to pull image %q: %w", c.Image, err))
		return "", false
	}
	p.mu.Lock()
	if st, ok := p.pods[uid]; ok {
		delete(st.imagePulls, c.Image)
		p.imagePulls.Reset(key)
	}
	p.mu.Unlock()
	p.cfg.Recorder.Eventf(pod, corev1.EventTypeNormal, "Pulled", "Successfully pulled image %q in %s", c.Image, p.cfg.Clock.Since(start).Round(time.Millisecond))
	return ref, true
}

// imageFailed leaves c waiting with reason and starts or doubles the image's pull back-off.
func (p *Provider) imageFailed(ctx context.Context, uid types.UID, pod *corev1.Pod, c *corev1.Container, reason string, err error) {
	p.mu.Lock()
	if st, ok := p.pods[uid]; ok {
		b := st.imagePulls[c.Image]
		if b == nil {
			b = &pullBackoff{}
			if st.imagePulls == nil {
				st.imagePulls = map[string]*pullBackoff{}
			}
			st.imagePulls[c.Image] = b
		}
		now := p.cfg.Clock.Now()
		delay := p.imagePulls.Next(imageKey{uid: uid, image: c.Image}, now)
		b.err = err.Error()
		st.waiting[c.Name] = waitingReason{reason: reason, message: err.Error()}
		// Synced again halfway through the back-off, so that the status says ImagePullBackOff
		// while it lasts (that sync wakes the pod when it ends), as the kubelet's periodic
		// resync makes it say; waking only at the end would go from ErrImagePull straight
		// to the next pull.
		p.wakeLocked(uid, now.Add(delay/2))
	}
	p.mu.Unlock()
	p.cfg.Recorder.Event(pod, corev1.EventTypeWarning, "Failed", err.Error())
	p.cfg.Recorder.Eventf(pod, corev1.EventTypeWarning, "Failed", "Error: %s", reason)
	klog.FromContext(ctx).V(2).Info("Cannot bring the image", "container", c.Name, "image", c.Image, "err", err)
}

// pullCredentials are the credentials of the pod's imagePullSecrets that apply to img, read with
// the node's identity. A secret that is missing is skipped, as the kubelet does (the pull may
// not need it); one that cannot be read otherwise is an error.
func (p *Provider) pullCredentials(ctx context.Context, pod *corev1.Pod, img string) ([]image.Credential, error) {
	objects := p.objects(pod)
	if len(pod.Spec.ImagePullSecrets) == 0 || objects == nil {
		return nil, nil
	}
	var secrets []*corev1.Secret
	for _, ref := range pod.Spec.ImagePullSecrets {
		s, err := objects.GetSecret(ctx, pod.Namespace, ref.Name)
		if err != nil {
			if apierrors.IsNotFound(err) {
				klog.FromContext(ctx).Info("An image pull secret does not exist; pulling without it", "secret", ref.Name)
				continue
			}
			return nil, fmt.Errorf("reading image pull secret %q: %w", ref.Name, err)
		}
		secrets = append(secrets, s)
	}
	ring, err := image.NewKeyring(secrets)
	if err != nil {
		return nil, err
	}
	return ring.Lookup(img), nil
}

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

// probeGrace is a liveness or startup probe's own terminationGracePeriodSeconds, if set.
func probeGrace(c *corev1.Container, grace time.Duration) time.Duration {
	for _, pr := range []*corev1.Probe{c.LivenessProbe, c.StartupProbe} {
		if pr != nil && pr.TerminationGracePeriodSeconds != nil {
			return time.Duration(*pr.TerminationGracePeriodSeconds) * time.Second
		}
	}
	return grace
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
