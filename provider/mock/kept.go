package mock

import (
	"reflect"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

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

// podRecord is what the provider keeps of a pod it runs: what keep leaves of it, without the
// Pod struct around it (about 1.2 KB, most of it spec fields the simulator never reads) or the
// Container structs (about 400 B each, likewise), and its status. A record is never modified: a change stores a new one, so a record taken under
// the lock is read after it. The Pod a change is notified with is made for that change and
// not kept here (the pod controller keeps a copy of its status struct, not the pod).
type podRecord struct {
	name, namespace string
	uid             types.UID
	annotations     map[string]string

	deletionTimestamp          *metav1.Time
	deletionGracePeriodSeconds *int64

	nodeName, hostname            string
	restartPolicy                 corev1.RestartPolicy
	terminationGracePeriodSeconds *int64
	initContainers, containers    []keptContainer

	status recordStatus
}

// recordStatus is a record's status: the fields the provider's statuses set pod by pod, and
// every other field (the addresses, the same in every pod) in rest, which the records whose
// rest is the provider's base share. A whole corev1.PodStatus is 360 B, most of it fields the
// provider never sets: this is 104 B, and the record 280 B (a 288 B slot) instead of 552 (576),
// 288 B a pod at api-1k (docs/performance.md "Live heap per pod"). Never modified, like the
// record.
type recordStatus struct {
	phase                                    corev1.PodPhase
	conditions                               []corev1.PodCondition
	startTime                                *metav1.Time
	initContainerStatuses, containerStatuses []corev1.ContainerStatus
	rest                                     *corev1.PodStatus
}

// statusOf is st as a record keeps it, sharing st's slices and pointers, and base when st's
// other fields are base's.
func statusOf(st *corev1.PodStatus, base *corev1.PodStatus) recordStatus {
	rest := *st
	rest.Phase, rest.Conditions, rest.StartTime = "", nil, nil
	rest.InitContainerStatuses, rest.ContainerStatuses = nil, nil
	r := recordStatus{
		phase: st.Phase, conditions: st.Conditions, startTime: st.StartTime,
		initContainerStatuses: st.InitContainerStatuses, containerStatuses: st.ContainerStatuses,
		rest: base,
	}
	if !reflect.DeepEqual(&rest, base) {
		r.rest = &rest
	}
	return r
}

// full is the status, sharing the record's slices and pointers: read-only.
func (s *recordStatus) full() corev1.PodStatus {
	st := *s.rest
	st.Phase, st.Conditions, st.StartTime = s.phase, s.conditions, s.startTime
	st.InitContainerStatuses, st.ContainerStatuses = s.initContainerStatuses, s.containerStatuses
	return st
}

// terminal is podstatus.IsTerminal of the status.
func (s *recordStatus) terminal() bool {
	return s.phase == corev1.PodSucceeded || s.phase == corev1.PodFailed
}

// keptContainer is what keepContainers leaves of a container.
type keptContainer struct {
	name, image   string
	ports         []corev1.ContainerPort
	env           []corev1.EnvVar
	requests      corev1.ResourceList
	restartPolicy *corev1.ContainerRestartPolicy
}

// keptContainersOf is cs, which keepContainers has trimmed, as kept containers (nil for nil);
// they share cs's slices and maps.
func keptContainersOf(cs []corev1.Container) []keptContainer {
	if cs == nil {
		return nil
	}
	kept := make([]keptContainer, len(cs))
	for i := range cs {
		c := &cs[i]
		kept[i] = keptContainer{name: c.Name, image: c.Image, ports: c.Ports, env: c.Env,
			requests: c.Resources.Requests, restartPolicy: c.RestartPolicy}
	}
	return kept
}

// copyContainers is a deep copy of kept as containers (nil for nil).
func copyContainers(kept []keptContainer) []corev1.Container {
	if kept == nil {
		return nil
	}
	cs := make([]corev1.Container, len(kept))
	for i := range kept {
		k := &kept[i]
		c := corev1.Container{Name: k.name, Image: k.image, Ports: k.ports, Env: k.env,
			Resources: corev1.ResourceRequirements{Requests: k.requests}, RestartPolicy: k.restartPolicy}
		c.DeepCopyInto(&cs[i])
	}
	return cs
}

// recordOf is the record of pod, which keep has trimmed; it shares pod's maps, slices and
// pointers (a pod stored is read-only from then on). With from, the record pod was copied from
// for a change of its status or deletion fields only, the record shares from's kept containers
// instead of making them again.
func recordOf(pod *corev1.Pod, from *podRecord, base *corev1.PodStatus) *podRecord {
	r := &podRecord{
		name: pod.Name, namespace: pod.Namespace, uid: pod.UID, annotations: pod.Annotations,
		deletionTimestamp: pod.DeletionTimestamp, deletionGracePeriodSeconds: pod.DeletionGracePeriodSeconds,
		nodeName: pod.Spec.NodeName, hostname: pod.Spec.Hostname, restartPolicy: pod.Spec.RestartPolicy,
		terminationGracePeriodSeconds: pod.Spec.TerminationGracePeriodSeconds,
		status:                        statusOf(&pod.Status, base),
	}
	if from != nil {
		r.initContainers, r.containers = from.initContainers, from.containers
	} else {
		r.initContainers, r.containers = keptContainersOf(pod.Spec.InitContainers), keptContainersOf(pod.Spec.Containers)
	}
	return r
}

// copyPod is a deep copy of the record as a pod: what GetPod and GetPods return, and what a
// change of the pod starts from. The parts are copied from values on the stack, with no Pod
// made only to be copied.
func (r *podRecord) copyPod() *corev1.Pod {
	meta := metav1.ObjectMeta{
		Name: r.name, Namespace: r.namespace, UID: r.uid, Annotations: r.annotations,
		DeletionTimestamp: r.deletionTimestamp, DeletionGracePeriodSeconds: r.deletionGracePeriodSeconds,
	}
	spec := corev1.PodSpec{
		NodeName: r.nodeName, Hostname: r.hostname, RestartPolicy: r.restartPolicy,
		TerminationGracePeriodSeconds: r.terminationGracePeriodSeconds,
	}
	pod := &corev1.Pod{}
	meta.DeepCopyInto(&pod.ObjectMeta)
	spec.DeepCopyInto(&pod.Spec)
	pod.Spec.InitContainers, pod.Spec.Containers = copyContainers(r.initContainers), copyContainers(r.containers)
	st := r.status.full()
	st.DeepCopyInto(&pod.Status)
	return pod
}
