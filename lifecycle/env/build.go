package env

import (
	"context"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/nodeobjects"
)

// Build returns container c's environment as the kubelet computes it
// (makeEnvironmentVariables):
//
//  1. each envFrom source in order: every key of the config map or secret, with the source's
//     prefix, in sorted key order; a key that is not a variable name is left out and reported
//     in Result.SkippedKeys;
//  2. each env entry in order: a value with its $(VAR) references expanded (Expand) against
//     the variables defined so far — the "dependent environment variables" — or the value of
//     its valueFrom (fieldRef through FieldValue, resourceFieldRef through ResourceValue,
//     configMapKeyRef, secretKeyRef, fileKeyRef from an env file in facts.VolumeDirs);
//  3. the service variables of facts.ServiceEnv the container did not define, in name order
//     ($(VAR) in env values sees them too).
//
// A name defined again takes the new value and keeps its first place. An optional reference
// (configMapKeyRef, secretKeyRef, envFrom) to a missing object or key defines nothing, leaving
// an earlier value of that name in place. A required one is an error naming the container,
// the variable and the object, e.g.
//
//	container "app": env "DB_PASS": secret "db" has no key "password"
//
// the text the caller puts in an Event and the container's Waiting message (reason
// CreateContainerConfigError). Config maps and secrets are read from pod's namespace through
// objects, each once per Build; objects may be nil for a pod that references none.
//
// resourceFieldRef's unset limits are facts.Allocatable, or the pod-level limit
// (pod.spec.resources.limits cpu, memory) where one is set, as the kubelet's env path does.
func Build(ctx context.Context, pod *corev1.Pod, c *corev1.Container, facts PodFacts, objects nodeobjects.ObjectGetter) (Result, error) {
	b := &builder{
		pod:     pod,
		c:       c,
		facts:   facts,
		objects: newObjectCache(objects, pod.Namespace),
		index:   make(map[string]int, len(c.Env)),
		logger:  klog.FromContext(ctx),
	}
	for i := range c.EnvFrom {
		if err := b.addSource(ctx, &c.EnvFrom[i]); err != nil {
			return Result{}, err
		}
	}
	for i := range c.Env {
		if err := b.addVar(ctx, &c.Env[i]); err != nil {
			return Result{}, err
		}
	}
	// The service variables come last, those the container does not define itself, in name
	// order (the kubelet's map order is random).
	for _, name := range slices.Sorted(maps.Keys(facts.ServiceEnv)) {
		if _, defined := b.index[name]; !defined {
			b.set(name, facts.ServiceEnv[name])
		}
	}
	return Result{Env: b.env, SkippedKeys: b.skipped}, nil
}

// builder holds the environment being built for one container.
type builder struct {
	pod     *corev1.Pod
	c       *corev1.Container
	facts   PodFacts
	objects *objectCache
	logger  klog.Logger

	env     []EnvVar
	index   map[string]int // name -> position in env
	skipped []SkippedKeys
}

// set defines name: a new name goes last, a known one keeps its place and takes value.
func (b *builder) set(name, value string) {
	if i, ok := b.index[name]; ok {
		b.env[i].Value = value
		return
	}
	b.index[name] = len(b.env)
	b.env = append(b.env, EnvVar{Name: name, Value: value})
}

// lookup is the lookup of Expand on the variables defined so far, then the service
// variables (the kubelet's MappingFuncFor(tmpEnv, serviceEnv)).
func (b *builder) lookup(name string) (string, bool) {
	if i, ok := b.index[name]; ok {
		return b.env[i].Value, true
	}
	v, ok := b.facts.ServiceEnv[name]
	return v, ok
}

// addSource adds the keys of one envFrom entry.
func (b *builder) addSource(ctx context.Context, from *corev1.EnvFromSource) error {
	var (
		kind, name string
		optional   *bool
	)
	switch {
	case from.ConfigMapRef != nil:
		kind, name, optional = kindConfigMap, from.ConfigMapRef.Name, from.ConfigMapRef.Optional
	case from.SecretRef != nil:
		kind, name, optional = kindSecret, from.SecretRef.Name, from.SecretRef.Optional
	default:
		return nil // nothing to read: the kubelet ignores it too
	}
	where := fmt.Sprintf("container %q: envFrom", b.c.Name)
	data, err := b.objects.data(ctx, kind, name)
	if err != nil {
		if apierrors.IsNotFound(err) && isTrue(optional) {
			b.logger.V(4).Info("Optional envFrom source not found, skipped", "container", b.c.Name, "kind", kind, "name", name)
			return nil
		}
		return objectError(where, kind, name, err)
	}
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var invalid []string
	for _, k := range keys {
		varName := from.Prefix + k
		if len(validation.IsRelaxedEnvVarName(varName)) != 0 {
			invalid = append(invalid, varName)
			continue
		}
		b.set(varName, data[k])
	}
	if len(invalid) > 0 {
		b.skipped = append(b.skipped, SkippedKeys{Kind: kind, Namespace: b.pod.Namespace, Name: name, Keys: invalid})
	}
	return nil
}

// addVar adds one env entry.
func (b *builder) addVar(ctx context.Context, ev *corev1.EnvVar) error {
	where := fmt.Sprintf("container %q: env %q", b.c.Name, ev.Name)
	// A literal value wins over valueFrom (the API allows only one; the kubelet checks the
	// value first), and an empty one with no valueFrom defines the name as "".
	if ev.Value != "" || ev.ValueFrom == nil {
		b.set(ev.Name, Expand(ev.Value, b.lookup))
		return nil
	}
	from := ev.ValueFrom
	switch {
	case from.FieldRef != nil:
		if v := from.FieldRef.APIVersion; v != "" && v != "v1" {
			return fmt.Errorf("%s: fieldRef apiVersion %q: %w", where, v, ErrUnsupportedSource)
		}
		value, err := FieldValue(b.pod, from.FieldRef.FieldPath, b.facts)
		if err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		b.set(ev.Name, value)
	case from.ResourceFieldRef != nil:
		value, err := b.resourceValue(from.ResourceFieldRef)
		if err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		b.set(ev.Name, value)
	case from.ConfigMapKeyRef != nil:
		ref := from.ConfigMapKeyRef
		return b.setFromKey(ctx, where, ev.Name, kindConfigMap, ref.Name, ref.Key, isTrue(ref.Optional))
	case from.SecretKeyRef != nil:
		ref := from.SecretKeyRef
		return b.setFromKey(ctx, where, ev.Name, kindSecret, ref.Name, ref.Key, isTrue(ref.Optional))
	case from.FileKeyRef != nil:
		return b.setFromFile(where, ev.Name, from.FileKeyRef)
	default:
		return fmt.Errorf("%s: valueFrom sets no source: %w", where, ErrUnsupportedSource)
	}
	return nil
}

// setFromKey defines name as key of config map or secret objName.
func (b *builder) setFromKey(ctx context.Context, where, name, kind, objName, key string, optional bool) error {
	data, err := b.objects.data(ctx, kind, objName)
	if err != nil {
		if apierrors.IsNotFound(err) && optional {
			b.logger.V(4).Info("Optional env source not found, skipped", "container", b.c.Name, "env", name, "kind", kind, "name", objName)
			return nil
		}
		return objectError(where, kind, objName, err)
	}
	value, ok := data[key]
	if !ok {
		if optional {
			b.logger.V(4).Info("Optional env key not found, skipped", "container", b.c.Name, "env", name, "kind", kind, "name", objName, "key", key)
			return nil
		}
		return missingKeyError(where, kind, objName, key)
	}
	b.set(name, value)
	return nil
}

// setFromFile defines name as a key of an env file in a volume. As the kubelet: a file that
// cannot be read or parsed is an error even for an optional reference; a key the file does not
// define (or defines as "") is skipped when optional, an error otherwise.
func (b *builder) setFromFile(where, name string, ref *corev1.FileKeySelector) error {
	dir, ok := b.facts.VolumeDirs[ref.VolumeName]
	if !ok {
		return fmt.Errorf("%s: fileKeyRef: no volume %q in PodFacts.VolumeDirs", where, ref.VolumeName)
	}
	value, err := fileValue(dir, ref.Path, ref.Key)
	if err != nil {
		return fmt.Errorf("%s: env file %q of volume %q: %w", where, ref.Path, ref.VolumeName, err)
	}
	if value == "" {
		if isTrue(ref.Optional) {
			b.logger.V(4).Info("Optional env file key not found, skipped", "container", b.c.Name, "env", name, "volume", ref.VolumeName, "path", ref.Path, "key", ref.Key)
			return nil
		}
		return &describedError{
			msg:   fmt.Sprintf("%s: env file %q of volume %q has no key %q", where, ref.Path, ref.VolumeName, ref.Key),
			cause: ErrKeyNotFound,
		}
	}
	b.set(name, value)
	return nil
}

// resourceValue resolves a resourceFieldRef of the container: its own resources when the
// reference names no container (the kubelet reads the container it starts, not the pod's
// copy), else those of the container it names.
func (b *builder) resourceValue(ref *corev1.ResourceFieldSelector) (string, error) {
	allocatable := podLimitedAllocatable(b.pod, b.facts.Allocatable)
	if ref.ContainerName == "" {
		return containerResourceValue(b.c.Resources, ref, allocatable)
	}
	return ResourceValue(b.pod, b.c.Name, ref, allocatable)
}

// podLimitedAllocatable returns allocatable with the pod-level limits (cpu, memory) in place of
// the node's: a container without its own limit is bounded by the pod's (PodLevelResources,
// on by default since v1.34). As the kubelet, only resources the node reports are replaced.
func podLimitedAllocatable(pod *corev1.Pod, allocatable corev1.ResourceList) corev1.ResourceList {
	if pod.Spec.Resources == nil || len(pod.Spec.Resources.Limits) == 0 {
		return allocatable
	}
	out := allocatable.DeepCopy()
	for _, name := range [...]corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		limit, set := pod.Spec.Resources.Limits[name]
		if _, known := out[name]; set && known && !limit.IsZero() {
			out[name] = limit.DeepCopy()
		}
	}
	return out
}

func isTrue(b *bool) bool { return b != nil && *b }
