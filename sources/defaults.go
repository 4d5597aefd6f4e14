// defaults.go holds the defaults a static pod gets as DecodeManifest takes it: the API server's
// (applyAPIDefaults, as the API server defaults a pod it stores), then the static pod's own
// (applyStaticDefaults: name, namespace, UID, annotations, the NoExecute toleration).

package sources

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vk-static/vk-static/podutil"
)

// applyAPIDefaults sets what the API server's defaulting would set on create.
func applyAPIDefaults(pod *corev1.Pod) {
	spec := &pod.Spec
	if spec.RestartPolicy == "" {
		spec.RestartPolicy = corev1.RestartPolicyAlways
	}
	if spec.DNSPolicy == "" {
		spec.DNSPolicy = corev1.DNSClusterFirst
	}
	if spec.TerminationGracePeriodSeconds == nil {
		spec.TerminationGracePeriodSeconds = ptrTo(defaultTerminationGracePeriodSeconds)
	}
	if spec.SecurityContext == nil {
		spec.SecurityContext = &corev1.PodSecurityContext{}
	}
	if spec.SchedulerName == "" {
		spec.SchedulerName = defaultSchedulerName
	}
	if spec.EnableServiceLinks == nil {
		spec.EnableServiceLinks = ptrTo(corev1.DefaultEnableServiceLinks)
	}
	for i := range spec.Volumes {
		defaultVolume(&spec.Volumes[i])
	}
	for i := range spec.InitContainers {
		defaultContainer(&spec.InitContainers[i], spec.HostNetwork)
	}
	for i := range spec.Containers {
		defaultContainer(&spec.Containers[i], spec.HostNetwork)
	}
}

func defaultContainer(c *corev1.Container, hostNetwork bool) {
	if c.ImagePullPolicy == "" {
		c.ImagePullPolicy = defaultPullPolicy(c.Image)
	}
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = defaultTerminationMessagePath
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
	}
	for i := range c.Ports {
		port := &c.Ports[i]
		if port.Protocol == "" {
			port.Protocol = corev1.ProtocolTCP
		}
		// With the host's network the container port is the host port.
		if hostNetwork && port.HostPort == 0 {
			port.HostPort = port.ContainerPort
		}
	}
	for i := range c.Env {
		if from := c.Env[i].ValueFrom; from != nil && from.FieldRef != nil && from.FieldRef.APIVersion == "" {
			from.FieldRef.APIVersion = "v1"
		}
	}
	defaultProbe(c.LivenessProbe)
	defaultProbe(c.ReadinessProbe)
	defaultProbe(c.StartupProbe)
	if c.Lifecycle != nil {
		defaultHandler(c.Lifecycle.PostStart)
		defaultHandler(c.Lifecycle.PreStop)
	}
	// A limit without a request requests the limit.
	for name, limit := range c.Resources.Limits {
		if _, ok := c.Resources.Requests[name]; !ok {
			if c.Resources.Requests == nil {
				c.Resources.Requests = corev1.ResourceList{}
			}
			c.Resources.Requests[name] = limit.DeepCopy()
		}
	}
}

// defaultPullPolicy is Always for ":latest" or an untagged image, IfNotPresent otherwise.
func defaultPullPolicy(image string) corev1.PullPolicy {
	if image == "" || strings.Contains(image, "@") {
		return corev1.PullIfNotPresent
	}
	name := image[strings.LastIndex(image, "/")+1:]
	tag := ""
	if i := strings.LastIndex(name, ":"); i >= 0 {
		tag = name[i+1:]
	}
	if tag == "" || tag == "latest" {
		return corev1.PullAlways
	}
	return corev1.PullIfNotPresent
}

func defaultProbe(p *corev1.Probe) {
	if p == nil {
		return
	}
	if p.TimeoutSeconds == 0 {
		p.TimeoutSeconds = defaultProbeTimeoutSeconds
	}
	if p.PeriodSeconds == 0 {
		p.PeriodSeconds = defaultProbePeriodSeconds
	}
	if p.SuccessThreshold == 0 {
		p.SuccessThreshold = defaultProbeSuccessThreshold
	}
	if p.FailureThreshold == 0 {
		p.FailureThreshold = defaultProbeFailureThreshold
	}
	defaultHTTPGet(p.HTTPGet)
}

func defaultHandler(h *corev1.LifecycleHandler) {
	if h != nil {
		defaultHTTPGet(h.HTTPGet)
	}
}

func defaultHTTPGet(h *corev1.HTTPGetAction) {
	if h == nil {
		return
	}
	if h.Path == "" {
		h.Path = "/"
	}
	if h.Scheme == "" {
		h.Scheme = corev1.URISchemeHTTP
	}
}

func defaultVolume(v *corev1.Volume) {
	src := &v.VolumeSource
	// A volume without a source is an emptyDir.
	if volumeSourceCount(src) == 0 {
		src.EmptyDir = &corev1.EmptyDirVolumeSource{}
	}
	if src.HostPath != nil && src.HostPath.Type == nil {
		src.HostPath.Type = ptrTo(corev1.HostPathUnset)
	}
	if d := src.DownwardAPI; d != nil {
		if d.DefaultMode == nil {
			d.DefaultMode = ptrTo(int32(defaultDownwardAPIMode))
		}
		for i := range d.Items {
			if f := d.Items[i].FieldRef; f != nil && f.APIVersion == "" {
				f.APIVersion = "v1"
			}
		}
	}
	if p := src.Projected; p != nil && p.DefaultMode == nil {
		p.DefaultMode = ptrTo(int32(corev1.ProjectedVolumeSourceDefaultMode))
	}
}

func ptrTo[T any](v T) *T { return &v }

// applyStaticDefaults gives a decoded, API-defaulted pod its static-pod identity on nodeName.
func applyStaticDefaults(pod *corev1.Pod, opts DecodeOptions) {
	if pod.UID == "" {
		pod.UID = staticPodUID(pod, opts)
	}
	if pod.Name != "" {
		pod.Name = pod.Name + "-" + strings.ToLower(opts.NodeName)
	}
	if pod.Namespace == "" {
		pod.Namespace = metav1.NamespaceDefault
	}
	pod.Spec.NodeName = opts.NodeName
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[podutil.ConfigHashAnnotationKey] = string(pod.UID)
	pod.Annotations[podutil.ConfigSourceAnnotationKey] = opts.Source
	if opts.Source == podutil.FileSource {
		pod.Annotations[podutil.ConfigFileAnnotationKey] = opts.Location
		// As the kubelet's applyDefaults does: a manifest URL's pods keep the tolerations
		// their manifest gives them, so they run as they would under the kubelet.
		addNoExecuteToleration(pod)
	}
	// The API server ignores status on create; a static pod starts Pending.
	pod.Status = corev1.PodStatus{Phase: corev1.PodPending}
}

// staticPodUID hashes the decoded pod with the node and the location, so the same manifest
// always yields the same UID (across restarts), any edit yields a new one, and the same manifest
// in two files or URLs yields two pods. config.seen is added after hashing and is not part of it.
func staticPodUID(pod *corev1.Pod, opts DecodeOptions) types.UID {
	h := sha256.New()
	// json.Marshal of a typed object is deterministic (struct order, sorted map keys).
	encoded, err := json.Marshal(pod)
	if err != nil {
		// A decoded Pod always marshals; fall back to the Go representation just in case.
		encoded = fmt.Appendf(nil, "%#v", pod)
	}
	h.Write(encoded)
	fmt.Fprintf(h, "\x00node:%s\x00%s:%s", opts.NodeName, opts.Source, opts.Location)
	return types.UID(hex.EncodeToString(h.Sum(nil)[:16]))
}

// addNoExecuteToleration lets a file-source static pod tolerate every NoExecute taint, like the
// kubelet does: a static pod cannot be evicted to another node, so the taint manager must leave
// it alone.
func addNoExecuteToleration(pod *corev1.Pod) {
	want := corev1.Toleration{Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}
	for _, t := range pod.Spec.Tolerations {
		if t.Key == "" && t.Operator == want.Operator && t.Effect == want.Effect && t.TolerationSeconds == nil {
			return
		}
	}
	pod.Spec.Tolerations = append(pod.Spec.Tolerations, want)
}
