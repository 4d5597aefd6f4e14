package localcopy

import (
	"cmp"
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/lifecycle/env"
)

// servicesFile holds the Services a pod's service environment variables come from.
const servicesFile = "services.json"

// Services is the Services of pod's environment: the agent's watch once it has listed them
// (and the Services that make up the pod's environment kept at each List), else — the agent
// started while the API server could not be reached — the ones kept, which then count as
// listed (HasSynced). Nil when the Store has no Services. It logs with ctx's logger.
func (s *Store) Services(ctx context.Context, pod *corev1.Pod) env.Services {
	if s.cfg.Services == nil {
		return nil
	}
	return podServices{s: s, pod: pod, logger: klog.FromContext(ctx)}
}

type podServices struct {
	s      *Store
	pod    *corev1.Pod
	logger klog.Logger
}

// HasSynced is true once the watch has listed the Services, or when the pod has a copy of them.
func (p podServices) HasSynced() bool {
	if p.s.cfg.Services.HasSynced() {
		return true
	}
	var kept []*corev1.Service
	ok, _ := p.s.load(p.pod.UID, servicesFile, &kept)
	return ok
}

// List returns the watch's Services once it has listed them, keeping those of the pod's
// environment; before, the pod's copy (none: the watch's, empty).
func (p podServices) List() ([]*corev1.Service, error) {
	watch := p.s.cfg.Services
	if watch.HasSynced() {
		list, err := watch.List()
		if err == nil {
			p.keep(list)
		}
		return list, err
	}
	var kept []*corev1.Service
	ok, err := p.s.load(p.pod.UID, servicesFile, &kept)
	if err != nil {
		p.logger.Error(err, "Could not read the node's copy of the pod's Services", "pod", klog.KObj(p.pod))
	}
	if !ok {
		return watch.List()
	}
	p.logger.V(2).Info("The Services have not been listed yet: using the node's copy", "pod", klog.KObj(p.pod))
	return kept, nil
}

// keep writes the Services of the pod's environment (env.PodServices), in a stable order so that
// an unchanged set is not written again, without what no variable comes from.
func (p podServices) keep(list []*corev1.Service) {
	links := p.pod.Spec.EnableServiceLinks == nil || *p.pod.Spec.EnableServiceLinks
	picked := env.PodServices(list, p.pod.Namespace, links)
	kept := make([]*corev1.Service, 0, len(picked))
	for _, svc := range picked {
		kept = append(kept, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: svc.Namespace, Name: svc.Name},
			Spec:       corev1.ServiceSpec{ClusterIP: svc.Spec.ClusterIP, ClusterIPs: svc.Spec.ClusterIPs, Ports: svc.Spec.Ports},
		})
	}
	slices.SortFunc(kept, func(a, b *corev1.Service) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	if err := p.s.keep(p.pod.UID, servicesFile, kept); err != nil {
		p.logger.Error(err, "Could not keep the node's copy of the pod's Services", "pod", klog.KObj(p.pod))
	}
}
