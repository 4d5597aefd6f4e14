package localcopy

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/nodeobjects"
)

// Objects is the ObjectGetter of pod's config maps and secrets (its env, volumes and image pull
// secrets): the API server's answer, kept; its copy when the API server cannot be reached. Nil
// when the Store has no ObjectGetter.
func (s *Store) Objects(pod *corev1.Pod) nodeobjects.ObjectGetter {
	if s.cfg.Objects == nil {
		return nil
	}
	return podObjects{s: s, pod: pod}
}

type podObjects struct {
	s   *Store
	pod *corev1.Pod
}

func (o podObjects) GetConfigMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error) {
	cm, err := o.s.cfg.Objects.GetConfigMap(ctx, namespace, name)
	var kept corev1.ConfigMap
	if o.read(ctx, namespace, "configmap-"+name+".json", err, func() any { c := cm.DeepCopy(); c.ManagedFields = nil; return c }, &kept) {
		return &kept, nil
	}
	return cm, err
}

func (o podObjects) GetSecret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	secret, err := o.s.cfg.Objects.GetSecret(ctx, namespace, name)
	var kept corev1.Secret
	if o.read(ctx, namespace, "secret-"+name+".json", err, func() any { c := secret.DeepCopy(); c.ManagedFields = nil; return c }, &kept) {
		return &kept, nil
	}
	return secret, err
}

// read applies the copy's rules to the API server's answer to a read of file (err its error;
// answer what to keep when there is none): an object read is kept, a 404 removes the copy, and
// when the API server cannot be reached the copy, if any, is loaded into kept: true then, and
// the caller returns it instead of err. Objects of another namespace than the pod's (which a
// pod cannot reference) are never kept.
func (o podObjects) read(ctx context.Context, namespace, file string, err error, answer func() any, kept any) bool {
	if namespace != o.pod.Namespace {
		return false
	}
	logger := klog.FromContext(ctx)
	switch {
	case err == nil:
		if err := o.s.keep(o.pod.UID, file, answer()); err != nil {
			logger.Error(err, "Could not keep the node's copy of an object the pod uses", "pod", klog.KObj(o.pod), "file", file)
		}
		return false
	case apierrors.IsNotFound(err):
		if err := o.s.drop(o.pod.UID, file); err != nil {
			logger.Error(err, "Could not remove the node's copy of an object that is gone", "pod", klog.KObj(o.pod), "file", file)
		}
		return false
	case !Unreachable(err) || ctx.Err() != nil:
		return false
	}
	ok, lerr := o.s.load(o.pod.UID, file, kept)
	if lerr != nil {
		logger.Error(lerr, "Could not read the node's copy of an object the pod uses", "pod", klog.KObj(o.pod), "file", file)
	}
	if ok {
		logger.V(2).Info("The API server cannot be reached: using the node's copy", "pod", klog.KObj(o.pod), "file", file, "err", err)
	}
	return ok
}
