package localcopy

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"

	"github.com/vk-static/vk-static/nodeobjects"
)

// RuntimeClasses is the RuntimeClassGetter of pod's RuntimeClass (spec.runtimeClassName),
// whose handler a sandbox made again during an outage needs: the API server's answer, kept;
// its copy when the API server cannot be reached. Nil when the Store has no
// RuntimeClassGetter.
func (s *Store) RuntimeClasses(pod *corev1.Pod) nodeobjects.RuntimeClassGetter {
	if s.cfg.RuntimeClasses == nil {
		return nil
	}
	return podRuntimeClasses{podObjects{s: s, pod: pod}}
}

type podRuntimeClasses struct{ podObjects }

func (o podRuntimeClasses) GetRuntimeClass(ctx context.Context, name string) (*nodev1.RuntimeClass, error) {
	rc, err := o.s.cfg.RuntimeClasses.GetRuntimeClass(ctx, name)
	var kept nodev1.RuntimeClass
	// A RuntimeClass has no namespace: it is kept as the pod's own.
	if o.read(ctx, o.pod.Namespace, "runtimeclass-"+name+".json", err, func() any { c := rc.DeepCopy(); c.ManagedFields = nil; return c }, &kept) {
		return &kept, nil
	}
	return rc, err
}
