package volume

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/vk-static/vk-static/lifecycle/env"
	"github.com/vk-static/vk-static/nodeobjects"
)

// defaultFileMode is the API's default for defaultMode, used when a pod was not defaulted
// (a static pod read from a file).
const defaultFileMode int32 = 0o644

// downwardInputs is what downwardAPI items read besides the pod.
type downwardInputs struct {
	facts       env.PodFacts
	allocatable corev1.ResourceList
}

// fileMode checks a mode field (defaultMode or an item's mode) as the API does: 0 to 0777.
func fileMode(field string, mode *int32, fallback os.FileMode) (os.FileMode, error) {
	if mode == nil {
		return fallback, nil
	}
	if *mode < 0 || *mode > 0o777 {
		return 0, refuse(field, "0"+strconv.FormatInt(int64(*mode), 8), "must be between 0 and 0777 (octal)")
	}
	return os.FileMode(*mode), nil
}

// itemPath checks an item's path field with the kubelet's rules.
func itemPath(field, p string) error {
	if err := validatePayloadPath(p); err != nil {
		return refuse(field, p, "%v", err)
	}
	return nil
}

// objectData reads the keys of the named ConfigMap or Secret. An optional object that does not
// exist reads as empty; a required one is a *MissingObjectError.
func (m *Manager) objectData(ctx context.Context, objects nodeobjects.ObjectGetter, kind, namespace, name string, optional bool, field string) (map[string][]byte, error) {
	if objects == nil {
		return nil, refuse(field, "", "%s volumes need the API server, and this agent runs without one", kind)
	}
	if name == "" {
		return nil, refuse(field+".name", "", "must name a %s", kind)
	}
	data := map[string][]byte{}
	var err error
	switch kind {
	case "ConfigMap":
		var cm *corev1.ConfigMap
		if cm, err = objects.GetConfigMap(ctx, namespace, name); err == nil {
			for k, v := range cm.Data {
				data[k] = []byte(v)
			}
			maps.Copy(data, cm.BinaryData)
		}
	case "Secret":
		var s *corev1.Secret
		if s, err = objects.GetSecret(ctx, namespace, name); err == nil {
			maps.Copy(data, s.Data)
		}
	}
	switch {
	case err == nil:
		return data, nil
	case apierrors.IsNotFound(err) && optional:
		return data, nil
	case apierrors.IsNotFound(err):
		return nil, &MissingObjectError{Field: field, Kind: kind, Namespace: namespace, Name: name, Err: err}
	default:
		return nil, fmt.Errorf("%s: reading %s %s/%s: %w", field, kind, namespace, name, err)
	}
}

// keysPayload projects an object's keys as the kubelet's configmap/secret MakePayload: every key
// under its own name when items is empty, else the listed keys under their paths; a listed key
// the object lacks is an error unless the source is optional.
func keysPayload(out payload, field, kind, namespace, name string, data map[string][]byte,
	items []corev1.KeyToPath, defaultMode os.FileMode, optional bool) error {
	if len(items) == 0 {
		for _, key := range slices.Sorted(maps.Keys(data)) {
			if err := validatePayloadPath(key); err != nil {
				return fmt.Errorf("%s: %s %s/%s key %q cannot be a file name: %w", field, kind, namespace, name, key, err)
			}
			out[key] = projectedFile{Data: data[key], Mode: defaultMode}
		}
		return nil
	}
	for j, item := range items {
		itemField := fmt.Sprintf("%s.items[%d]", field, j)
		if err := itemPath(itemField+".path", item.Path); err != nil {
			return err
		}
		mode, err := fileMode(itemField+".mode", item.Mode, defaultMode)
		if err != nil {
			return err
		}
		content, ok := data[item.Key]
		if !ok {
			if optional {
				continue
			}
			return &MissingObjectError{Field: itemField + ".key", Kind: kind, Namespace: namespace, Name: name, Key: item.Key}
		}
		out[item.Path] = projectedFile{Data: content, Mode: mode}
	}
	return nil
}

// downwardPayload projects downwardAPI items: a field of the pod, or a container's resource.
func downwardPayload(out payload, pod *corev1.Pod, field string, items []corev1.DownwardAPIVolumeFile,
	defaultMode os.FileMode, in downwardInputs) error {
	for j, item := range items {
		itemField := fmt.Sprintf("%s.items[%d]", field, j)
		if err := itemPath(itemField+".path", item.Path); err != nil {
			return err
		}
		mode, err := fileMode(itemField+".mode", item.Mode, defaultMode)
		if err != nil {
			return err
		}
		var value string
		switch {
		case item.FieldRef != nil && item.ResourceFieldRef != nil:
			return refuse(itemField, "", "must set one of fieldRef and resourceFieldRef, not both")
		case item.FieldRef != nil:
			value, err = env.FieldValue(pod, item.FieldRef.FieldPath, in.facts)
			if err != nil {
				return refuse(itemField+".fieldRef.fieldPath", item.FieldRef.FieldPath, "%v", err)
			}
		case item.ResourceFieldRef != nil:
			ref := item.ResourceFieldRef
			value, err = env.ResourceValue(pod, ref.ContainerName, ref, in.allocatable)
			if err != nil {
				return refuse(itemField+".resourceFieldRef", ref.Resource, "%v", err)
			}
		default:
			return refuse(itemField, "", "must set fieldRef or resourceFieldRef")
		}
		out[item.Path] = projectedFile{Data: []byte(value), Mode: mode}
	}
	return nil
}

// apiVolume is a volume whose files are written by the atomic writer.
type apiVolume struct {
	plugin string
	// memory: the kubelet wraps it in a memory-backed emptyDir (secrets never reach the disk).
	memory bool
	// secretData: on disk it would hold secret data, worth a warning when tmpfs is not
	// possible.
	secretData bool
}

// apiVolumeKind says whether volume v is written by the atomic writer, and how.
func apiVolumeKind(v *corev1.Volume) (apiVolume, bool) {
	switch {
	case v.ConfigMap != nil:
		return apiVolume{plugin: pluginConfigMap}, true
	case v.Secret != nil:
		return apiVolume{plugin: pluginSecret, memory: true, secretData: true}, true
	case v.DownwardAPI != nil:
		return apiVolume{plugin: pluginDownwardAPI, memory: true}, true
	case v.Projected != nil:
		secret := false
		for _, s := range v.Projected.Sources {
			secret = secret || s.Secret != nil || s.ServiceAccountToken != nil
		}
		return apiVolume{plugin: pluginProjected, memory: true, secretData: secret}, true
	}
	return apiVolume{}, false
}

// objectVolumePayload adds to out the files of a configMap or secret volume (field names it):
// the object's keys, or its items, with their modes.
func (m *Manager) objectVolumePayload(ctx context.Context, out payload, pod *corev1.Pod, field, kind, name string, defaultMode *int32, items []corev1.KeyToPath, optional *bool) error {
	mode, err := fileMode(field+".defaultMode", defaultMode, os.FileMode(defaultFileMode))
	if err != nil {
		return err
	}
	return m.objectPayload(ctx, out, pod, field, kind, name, items, mode, optional)
}

// objectPayload adds to out the keys (or items) of a config map or secret, with mode as their
// default mode: a configMap or secret volume's, or a projected volume's source of pod.
func (m *Manager) objectPayload(ctx context.Context, out payload, pod *corev1.Pod, field, kind, name string, items []corev1.KeyToPath, mode os.FileMode, optionalRef *bool) error {
	optional := optionalRef != nil && *optionalRef
	data, err := m.objectData(ctx, m.podObjects(pod), kind, pod.Namespace, name, optional, field)
	if err != nil {
		return err
	}
	return keysPayload(out, field, kind, pod.Namespace, name, data, items, mode, optional)
}

// apiPayload computes the files of volume i, which apiVolumeKind accepted.
func (m *Manager) apiPayload(ctx context.Context, pod *corev1.Pod, i int, in downwardInputs) (payload, error) {
	v := &pod.Spec.Volumes[i]
	out := payload{}
	base := fmt.Sprintf("spec.volumes[%d]", i)
	switch {
	case v.ConfigMap != nil:
		src := v.ConfigMap
		return out, m.objectVolumePayload(ctx, out, pod, base+".configMap", "ConfigMap", src.Name, src.DefaultMode, src.Items, src.Optional)
	case v.Secret != nil:
		src := v.Secret
		return out, m.objectVolumePayload(ctx, out, pod, base+".secret", "Secret", src.SecretName, src.DefaultMode, src.Items, src.Optional)
	case v.DownwardAPI != nil:
		src := v.DownwardAPI
		field := base + ".downwardAPI"
		mode, err := fileMode(field+".defaultMode", src.DefaultMode, os.FileMode(defaultFileMode))
		if err != nil {
			return nil, err
		}
		return out, downwardPayload(out, pod, field, src.Items, mode, in)
	case v.Projected != nil:
		return m.projectedPayload(ctx, pod, i, in)
	}
	return nil, fmt.Errorf("%s: not a projected kind of volume", base)
}

// projectedPayload merges the sources of projected volume i in order (a later source's file
// replaces an earlier one's at the same path, as in the kubelet).
func (m *Manager) projectedPayload(ctx context.Context, pod *corev1.Pod, i int, in downwardInputs) (payload, error) {
	src := pod.Spec.Volumes[i].Projected
	field := fmt.Sprintf("spec.volumes[%d].projected", i)
	mode, err := fileMode(field+".defaultMode", src.DefaultMode, os.FileMode(defaultFileMode))
	if err != nil {
		return nil, err
	}
	out := payload{}
	for j, s := range src.Sources {
		sf := fmt.Sprintf("%s.sources[%d]", field, j)
		switch {
		case s.ConfigMap != nil:
			if err := m.objectPayload(ctx, out, pod, sf+".configMap", "ConfigMap", s.ConfigMap.Name, s.ConfigMap.Items, mode, s.ConfigMap.Optional); err != nil {
				return nil, err
			}
		case s.Secret != nil:
			if err := m.objectPayload(ctx, out, pod, sf+".secret", "Secret", s.Secret.Name, s.Secret.Items, mode, s.Secret.Optional); err != nil {
				return nil, err
			}
		case s.DownwardAPI != nil:
			if err := downwardPayload(out, pod, sf+".downwardAPI", s.DownwardAPI.Items, mode, in); err != nil {
				return nil, err
			}
		case s.ServiceAccountToken != nil:
			if err := m.tokenPayload(ctx, out, pod, sf+".serviceAccountToken", s.ServiceAccountToken, mode); err != nil {
				return nil, err
			}
		case s.ClusterTrustBundle != nil:
			return nil, refuse(sf+".clusterTrustBundle", "", "not supported on this node (supported projected sources: configMap, secret, downwardAPI, serviceAccountToken)")
		case s.PodCertificate != nil:
			return nil, refuse(sf+".podCertificate", "", "not supported on this node (supported projected sources: configMap, secret, downwardAPI, serviceAccountToken)")
		default:
			return nil, refuse(sf, "", "no source set, or one this node does not know (supported: configMap, secret, downwardAPI, serviceAccountToken)")
		}
	}
	return out, nil
}

// The API's defaults and bounds for a projected token's expirationSeconds.
const (
	defaultTokenExpirationSeconds int64 = 60 * 60
	minTokenExpirationSeconds     int64 = 10 * 60
	maxTokenExpirationSeconds     int64 = 1 << 32
)

// defaultServiceAccount is the API's default for spec.serviceAccountName.
const defaultServiceAccount = "default"

// tokenPayload projects a service account token as the kubelet's projected volume does: a
// token for the pod's service account, bound to the pod, for the source's audience (none: the
// API server's own), written at the source's path with the volume's defaultMode. The token
// comes from the cache unless it is due for a refresh.
func (m *Manager) tokenPayload(ctx context.Context, out payload, pod *corev1.Pod, field string,
	src *corev1.ServiceAccountTokenProjection, mode os.FileMode) error {
	if m.tokens.requester == nil {
		return refuse(field, "", "service account tokens are requested from the API server with the node's identity, "+
			"and this agent runs without one; set automountServiceAccountToken: false on the pod and do not project tokens")
	}
	if err := itemPath(field+".path", src.Path); err != nil {
		return err
	}
	expiration := defaultTokenExpirationSeconds
	if src.ExpirationSeconds != nil {
		expiration = *src.ExpirationSeconds
	}
	if expiration < minTokenExpirationSeconds || expiration > maxTokenExpirationSeconds {
		return refuse(field+".expirationSeconds", strconv.FormatInt(expiration, 10),
			"must be between %d (10 minutes) and %d", minTokenExpirationSeconds, maxTokenExpirationSeconds)
	}
	sa := pod.Spec.ServiceAccountName
	if sa == "" {
		sa = defaultServiceAccount
	}
	var audiences []string
	if src.Audience != "" {
		audiences = []string{src.Audience}
	}
	key := tokenKey{namespace: pod.Namespace, serviceAccount: sa, audience: src.Audience,
		expirationSeconds: expiration, podUID: pod.UID}
	token, err := m.tokens.token(ctx, key, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{
			Audiences:         audiences,
			ExpirationSeconds: &expiration,
			BoundObjectRef: &authenticationv1.BoundObjectReference{
				Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID,
			},
		},
	})
	if err != nil {
		return fmt.Errorf("%s: %w", field, err)
	}
	// The kubelet's projected token: 0600 and the fsUser's once the pod has an fsGroup or an
	// fsUser (the fsGroup then adds group read), whatever defaultMode says.
	own := podOwnership(pod)
	out[src.Path] = projectedFile{Data: []byte(token), Mode: own.credentialMode(mode), FsUser: own.fsUser}
	return nil
}
