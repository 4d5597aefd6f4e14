package node

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/mirror"
	"github.com/vk-static/vk-static/podutil"
)

// errWaitForWatch marks a sync that must be retried because an answer of the API server
// contradicts what the watch shows (AlreadyExists for a mirror the watch lacks, NotFound for one
// it holds): one of them is behind, and deciding again shortly is right either way. It is
// retried with the pod's back-off and logged quietly.
var errWaitForWatch = errors.New("the API server and the watch disagree")

// errMirrorRefused marks a sync whose mirror the API server refused (Forbidden, Invalid). The
// refusal may last a moment only: an API server that has just started refuses mirrors that
// name system-node-critical until it has made its system PriorityClasses, which is every
// kubeadm control plane's first mirrors. So it is decided again with a back-off of its own
// (refusedRetry), which grows to the resync period: a mirror refused for good is asked for no
// more often than the resync would, and reported once.
var errMirrorRefused = errors.New("the API server refused the mirror pod")

// syncMirror makes the mirror of key match its static pod, as mirror.Decide says. desired is
// the wanted pod under key (nil when none); staticTerminated reports that no provider pod is
// running under key, so an orphaned mirror may go.
func (c *PodController) syncMirror(ctx context.Context, key string, desired *corev1.Pod, staticTerminated bool) error {
	if c.static || !c.sourceSeen(podutil.APIServerSource) {
		// Until the API source's first snapshot is applied the pod manager does not know which
		// mirrors exist (e.g. right after a restart): deciding now would create duplicates
		// and waste requests. markSourceSeen requeues every pod then.
		return nil
	}
	in := mirror.DecisionInput{StaticTerminated: staticTerminated}
	if desired != nil && podutil.IsStaticPod(desired) {
		in.Static = desired
	} else if desired != nil {
		return nil // an API pod owns the name; no mirror belongs here
	}
	if m, ok := c.mirrorUnder(key); ok {
		in.Mirror = m
	}
	if in.Static == nil && in.Mirror == nil {
		return nil
	}
	_, err := mirror.UsableNode(c.cfg.Node, c.cfg.NodeName)
	in.NodeUsable = err == nil

	action := mirror.Decide(in)
	logger := klog.FromContext(ctx)
	switch action {
	case mirror.None:
		return nil
	case mirror.Delete, mirror.Recreate:
		deleted, err := c.cfg.Mirrors.DeleteMirrorPod(ctx, key, &in.Mirror.UID)
		c.cfg.Metrics.mirrorOp("delete", err)
		if err != nil {
			return fmt.Errorf("delete mirror pod: %w", err)
		}
		if !deleted {
			// The API server says it is gone (404, or a UID precondition that failed). That is
			// final only if the watch agrees: an API server that is still starting answers 404
			// for pods it has (NodeRestriction before its informer has synced).
			if m, ok := c.mirrorUnder(key); ok && m.UID == in.Mirror.UID {
				return fmt.Errorf("%w: the API server answered that mirror pod %s is gone, but the watch still holds it",
					errWaitForWatch, in.Mirror.UID)
			}
		}
		logger.V(2).Info("Deleted mirror pod", "action", action, "mirrorUID", in.Mirror.UID, "deleted", deleted)
		if action == mirror.Delete {
			return nil
		}
	}
	err = c.cfg.Mirrors.CreateMirrorPod(ctx, in.Static)
	c.cfg.Metrics.mirrorOp("create", err)
	switch {
	case errors.Is(err, mirror.ErrMirrorExists):
		// A mirror the watch has not shown yet (our delete raced its event, or someone else made
		// one): decide again, with back-off, once the watch has caught up.
		return fmt.Errorf("%w: %w", errWaitForWatch, err)
	case errors.Is(err, mirror.ErrNodeUnavailable):
		logger.V(2).Info("Node unavailable; mirror pod creation deferred", "err", err)
		return nil // the Node's events and the periodic resync requeue mirrors once the Node is back
	case apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || errors.Is(err, mirror.ErrNotStatic):
		// Refused by the API server: report it like a bad manifest, once, and try again with
		// the refusal's back-off (a starting or restarting API server can refuse transiently),
		// which never asks more often than that, nor in the end more often than the resync.
		if c.refusals.first(key, "mirror", err) {
			c.cfg.Recorder.Eventf(nodeRef(c.cfg.NodeName), corev1.EventTypeWarning, "FailedMirror",
				"The API server refused the mirror pod for %s: %v", key, err)
			logger.Error(err, "The API server refused the mirror pod; trying again with back-off")
		}
		return fmt.Errorf("%w: %w", errMirrorRefused, err)
	case err != nil:
		return fmt.Errorf("create mirror pod: %w", err)
	}
	c.refusals.clear(key, "mirror")
	logger.V(2).Info("Created mirror pod", "action", action, "hash", podutil.Hash(in.Static))
	return nil
}

// mirrorUnder is the mirror pod the API source holds under key, if any.
func (c *PodController) mirrorUnder(key string) (*corev1.Pod, bool) {
	name, namespace, err := podutil.ParseFullName(key)
	if err != nil {
		return nil, false
	}
	return c.cfg.Pods.GetMirrorPodByPod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}})
}

// RequeueMirrors queues every static pod and orphaned mirror, e.g. when the Node object
// appears or changes.
func (c *PodController) RequeueMirrors() {
	if c.static {
		return
	}
	pods, mirrors := c.cfg.Pods.GetPodsAndMirrorPods()
	for _, p := range pods {
		if podutil.IsStaticPod(p) {
			c.sync.Add(podutil.FullName(p))
		}
	}
	for _, m := range mirrors {
		c.sync.Add(podutil.FullName(m))
	}
}

// nodeRef refers to this agent's Node in events, as the kubelet does (UID = node name), so
// that `kubectl describe node` shows them.
func nodeRef(nodeName string) *corev1.ObjectReference {
	return &corev1.ObjectReference{Kind: "Node", Name: nodeName, UID: types.UID(nodeName)}
}
