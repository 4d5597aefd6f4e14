package mock

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vk-static/vk-static/podutil"
)

// keep trims pod, in place, to what the simulator reads and what GetPod and GetPods report:
// the identity restart adoption needs (name, namespace, UID and the annotations,
// provider.PodLifecycleHandler's GetPods), the deletion fields, and of the spec only what the
// simulator's features read. Everything else a pod carries (labels, tolerations, volumes,
// security contexts, probes, ...) the simulator never looks at, and the provider keeps a pod
// for as long as it runs: at api-1k that rest was about 0.7 KB a pod of a 1.2 KB spec and
// metadata (docs/performance.md, "Live heap per pod"). The pod must be the provider's to keep
// (CreatePod's and UpdatePod's are); the maps and slices kept are the pod's own, not copied.
func keep(pod *corev1.Pod) {
	m := &pod.ObjectMeta
	pod.ObjectMeta = metav1.ObjectMeta{
		Name: m.Name, Namespace: m.Namespace, UID: m.UID, Annotations: keptAnnotations(m.Annotations),
		DeletionTimestamp: m.DeletionTimestamp, DeletionGracePeriodSeconds: m.DeletionGracePeriodSeconds,
	}
	pod.Spec = keptSpec(&pod.Spec)
}

// keptSpec is what the simulator reads of a spec: the node it runs on, hostname (exec
// "hostname"), restartPolicy (run-duration), terminationGracePeriodSeconds (delete-delay), and
// each container's name, image, ports (port-forward), env (exec "env"), requests (stats) and
// restartPolicy (a sidecar runs). The container slices are trimmed in place.
func keptSpec(s *corev1.PodSpec) corev1.PodSpec {
	keepContainers(s.InitContainers)
	keepContainers(s.Containers)
	return corev1.PodSpec{
		NodeName: s.NodeName, Hostname: s.Hostname, RestartPolicy: s.RestartPolicy,
		TerminationGracePeriodSeconds: s.TerminationGracePeriodSeconds,
		InitContainers:                s.InitContainers, Containers: s.Containers,
	}
}

func keepContainers(cs []corev1.Container) {
	for i := range cs {
		c := &cs[i]
		*c = corev1.Container{
			Name: c.Name, Image: c.Image, Ports: c.Ports, Env: c.Env,
			Resources:     corev1.ResourceRequirements{Requests: c.Resources.Requests},
			RestartPolicy: c.RestartPolicy,
		}
	}
}

// apiSourceOnly is the annotations of an API pod without any of its own: the config.source the
// API source stamps on every pod. Such pods (the scale benchmarks' all are) share this one map,
// read-only, instead of ~340 B each; a pod's annotations are never modified in place (UpdatePod
// replaces them, GetPod and GetPods copy, a notified pod is read-only).
var apiSourceOnly = map[string]string{podutil.ConfigSourceAnnotationKey: podutil.APIServerSource}

func keptAnnotations(a map[string]string) map[string]string {
	if len(a) == 1 && a[podutil.ConfigSourceAnnotationKey] == podutil.APIServerSource {
		return apiSourceOnly
	}
	return a
}
