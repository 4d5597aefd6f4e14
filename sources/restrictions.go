// restrictions.go holds what a static pod may not reference (restrictPod): API objects — service
// accounts, secrets, config maps, claims, projected tokens, ephemeral containers — which the API
// server would refuse in a mirror, and which a node-local manifest has no identity to read.

package sources

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// restrictPod rejects what a static pod cannot have: references to API objects. The kubelet
// cannot read them for a pod the API server did not schedule, and NodeRestriction admission
// refuses a mirror pod that has them. Each problem names the field and says why.
func restrictPod(pod *corev1.Pod, p problems) {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	forbid := func(path *field.Path, what string) {
		errs = append(errs, field.Forbidden(path, what))
	}
	if sa := pod.Spec.ServiceAccountName; sa != "" && sa != "default" {
		forbid(spec.Child("serviceAccountName"), "service account "+quote(sa))
	}
	//nolint:staticcheck // DeprecatedServiceAccount is still honoured by the API server.
	if sa := pod.Spec.DeprecatedServiceAccount; sa != "" && sa != "default" {
		forbid(spec.Child("serviceAccount"), "service account "+quote(sa))
	}
	if a := pod.Spec.AutomountServiceAccountToken; a != nil && *a {
		forbid(spec.Child("automountServiceAccountToken"), "an automounted service account token")
	}
	for i, s := range pod.Spec.ImagePullSecrets {
		forbid(spec.Child("imagePullSecrets").Index(i), "secret "+quote(s.Name))
	}
	for i, c := range pod.Spec.ResourceClaims {
		forbid(spec.Child("resourceClaims").Index(i), "resource claim "+quote(c.Name))
	}
	if len(pod.Spec.EphemeralContainers) > 0 {
		forbid(spec.Child("ephemeralContainers"), "ephemeral containers")
	}
	for i, v := range pod.Spec.Volumes {
		restrictVolume(v, spec.Child("volumes").Index(i), forbid)
	}
	for i, c := range pod.Spec.InitContainers {
		restrictContainer(c, spec.Child("initContainers").Index(i), forbid)
	}
	for i, c := range pod.Spec.Containers {
		restrictContainer(c, spec.Child("containers").Index(i), forbid)
	}
	p.addAll(ErrForbiddenReference, errs)
}

func restrictVolume(v corev1.Volume, path *field.Path, forbid func(*field.Path, string)) {
	switch {
	case v.Secret != nil:
		forbid(path.Child("secret"), "secret volume "+quote(v.Name))
	case v.ConfigMap != nil:
		forbid(path.Child("configMap"), "configMap volume "+quote(v.Name))
	case v.PersistentVolumeClaim != nil:
		forbid(path.Child("persistentVolumeClaim"), "persistentVolumeClaim volume "+quote(v.Name))
	case v.CSI != nil:
		forbid(path.Child("csi"), "CSI volume "+quote(v.Name))
	case v.Ephemeral != nil:
		forbid(path.Child("ephemeral"), "ephemeral volume "+quote(v.Name))
	case v.Projected != nil:
		for i, s := range v.Projected.Sources {
			sp := path.Child("projected", "sources").Index(i)
			switch {
			case s.Secret != nil:
				forbid(sp.Child("secret"), "projected secret in volume "+quote(v.Name))
			case s.ConfigMap != nil:
				forbid(sp.Child("configMap"), "projected configMap in volume "+quote(v.Name))
			case s.ServiceAccountToken != nil:
				forbid(sp.Child("serviceAccountToken"), "projected service account token in volume "+quote(v.Name))
			case s.ClusterTrustBundle != nil:
				forbid(sp.Child("clusterTrustBundle"), "projected cluster trust bundle in volume "+quote(v.Name))
			case s.PodCertificate != nil:
				forbid(sp.Child("podCertificate"), "projected pod certificate in volume "+quote(v.Name))
			}
		}
	}
}

func restrictContainer(c corev1.Container, path *field.Path, forbid func(*field.Path, string)) {
	for i, env := range c.Env {
		if env.ValueFrom == nil {
			continue
		}
		ep := path.Child("env").Index(i).Child("valueFrom")
		if r := env.ValueFrom.SecretKeyRef; r != nil {
			forbid(ep.Child("secretKeyRef"), "secret "+quote(r.Name))
		}
		if r := env.ValueFrom.ConfigMapKeyRef; r != nil {
			forbid(ep.Child("configMapKeyRef"), "configMap "+quote(r.Name))
		}
	}
	for i, from := range c.EnvFrom {
		ep := path.Child("envFrom").Index(i)
		if r := from.SecretRef; r != nil {
			forbid(ep.Child("secretRef"), "secret "+quote(r.Name))
		}
		if r := from.ConfigMapRef; r != nil {
			forbid(ep.Child("configMapRef"), "configMap "+quote(r.Name))
		}
	}
	for i, claim := range c.Resources.Claims {
		forbid(path.Child("resources", "claims").Index(i), "resource claim "+quote(claim.Name))
	}
}

func quote(s string) string { return `"` + s + `"` }
