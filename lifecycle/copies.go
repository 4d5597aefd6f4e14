package lifecycle

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/lifecycle/localcopy"
	"github.com/vk-static/vk-static/nodeobjects"
)

// newCopies is the node's copy of what API pods are built from (localcopy): their config
// maps, secrets, Services, tokens and RuntimeClass, kept in each pod's directory, which takes them with it
// when the pod is forgotten (forget), and read while the API server cannot be reached, so
// that after an agent restart or a reboot during an outage the pods run again with the data
// they had. Standalone (no getters) it keeps nothing.
func newCopies(cfg Config) *localcopy.Store {
	return localcopy.New(localcopy.Config{
		PodsDir: cfg.podsDir(), Objects: cfg.Objects, Tokens: cfg.Tokens, Services: cfg.Services,
		RuntimeClasses: cfg.RuntimeClasses, Clock: cfg.Clock,
	})
}

// objects reads pod's config maps and secrets through the node's copy; nil standalone.
func (p *Provider) objects(pod *corev1.Pod) nodeobjects.ObjectGetter { return p.copies.Objects(pod) }
