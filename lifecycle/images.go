package lifecycle

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/backoff"
	"github.com/vk-static/vk-static/lifecycle/image"
	"github.com/vk-static/vk-static/provider"
)

// imagePullBackoff is the kubelet's image pull back-off: 10 s doubling to 5 min per pod and
// image (Provider.imagePulls).
var imagePullBackoff = backoff.Policy{Initial: 10 * time.Second, Max: 5 * time.Minute}

// imageKey names an image of a pod for the pull back-off.
type imageKey struct {
	uid   types.UID
	image string
}

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

// Image reasons, the kubelet's.
const (
	reasonErrImagePull      = "ErrImagePull"
	reasonImagePullBackOff  = "ImagePullBackOff"
	reasonErrImageNeverPull = "ErrImageNeverPull"
)

// ListImages is the runtime's images, which the node controller lists every status update
// interval for the Node's status.images; a runtime that keeps none (processes) has none, and
// the Node lists none.
func (p *Provider) ListImages(ctx context.Context) ([]provider.Image, error) {
	if l, ok := p.rt.(ImageLister); ok {
		return l.ListImages(ctx)
	}
	return nil, nil
}
