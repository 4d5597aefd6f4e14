package lifecycle

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
)

// runtimeHandler is the handler of pod's RuntimeClass (SandboxConfig.RuntimeHandler), as the
// kubelet's RuntimeClass manager looks it up (LookupRuntimeHandler): "" for a pod that names
// none, and for every pod without Config.RuntimeClasses (standalone, where the kubelet has no
// manager). A RuntimeClass that does not exist is the kubelet's error, worded as its informer
// cache words it (runtimeclass.node.k8s.io "NAME" not found); the sandbox then fails and is
// tried again, as the kubelet's.
func (p *Provider) runtimeHandler(ctx context.Context, pod *corev1.Pod) (string, error) {
	if p.cfg.RuntimeClasses == nil || pod.Spec.RuntimeClassName == nil || *pod.Spec.RuntimeClassName == "" {
		return "", nil
	}
	name := *pod.Spec.RuntimeClassName
	rc, err := p.copies.RuntimeClasses(pod).GetRuntimeClass(ctx, name)
	if apierrors.IsNotFound(err) {
		return "", apierrors.NewNotFound(nodev1.Resource("runtimeclass"), name)
	}
	if err != nil {
		return "", fmt.Errorf("failed to lookup RuntimeClass %s: %w", name, err)
	}
	if rc.Handler != "" {
		klog.FromContext(ctx).V(2).Info("Running pod with runtime handler", "pod", klog.KObj(pod), "runtimeHandler", rc.Handler)
	}
	return rc.Handler, nil
}
