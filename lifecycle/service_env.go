package lifecycle

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/lifecycle/env"
	"github.com/vk-static/vk-static/podutil"
)

// errServicesNotSynced is the kubelet's refusal to build an API pod's environment before the
// Services were read once.
var errServicesNotSynced = errors.New("services have not yet been read at least once, cannot construct envvars")

// serviceEnv is pod's service environment variables (env.ServiceEnv) from Config.Services,
// none without it (standalone: no API server, no Services). As the kubelet, an API pod's
// container waits (CreateContainerConfigError, tried again) until the Services have been read
// once, so that it never starts without KUBERNETES_SERVICE_HOST, which in-cluster clients
// need; a static pod does not wait for the API server. An API pod's Services are the ones the
// node kept for it (localcopy) while the agent has not read them — it started while the API
// server could not be reached — so that it runs again with the environment it had.
func (p *Provider) serviceEnv(ctx context.Context, pod *corev1.Pod) (map[string]string, error) {
	services := p.cfg.Services
	if services == nil {
		return nil, nil
	}
	if !podutil.IsStaticPod(pod) {
		services = p.copies.Services(ctx, pod)
		if !services.HasSynced() {
			return nil, errServicesNotSynced
		}
	}
	list, err := services.List()
	if err != nil {
		return nil, fmt.Errorf("failed to list services when setting up env vars: %w", err)
	}
	// enableServiceLinks is defaulted to true by the API server and the static pod sources.
	links := pod.Spec.EnableServiceLinks == nil || *pod.Spec.EnableServiceLinks
	return env.ServiceEnv(list, pod.Namespace, links), nil
}
