// validation.go holds the API server's validation of a static pod that DecodeManifest runs
// (validatePod): what the API server would refuse of the mirror, found before the pod runs.

package sources

import (
	"fmt"
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/vk-static/vk-static/podutil"
)

// validatePod records what the API server's validation would refuse on create, for the fields a
// static pod can set. It is not the full validation (k8s.io/kubernetes is not a library): the API
// server stays the backstop and a mirror pod it refuses is reported like a bad manifest.
func validatePod(pod *corev1.Pod, p problems) {
	var errs field.ErrorList
	meta := field.NewPath("metadata")
	if pod.Name == "" {
		errs = append(errs, field.Required(meta.Child("name"), "a static pod needs a name"))
	} else {
		for _, msg := range validation.IsDNS1123Subdomain(pod.Name) {
			errs = append(errs, field.Invalid(meta.Child("name"), pod.Name, msg))
		}
	}
	for _, msg := range validation.IsDNS1123Label(pod.Namespace) {
		errs = append(errs, field.Invalid(meta.Child("namespace"), pod.Namespace, msg))
	}
	errs = append(errs, metavalidation.ValidateLabels(pod.Labels, meta.Child("labels"))...)
	errs = append(errs, apivalidation.ValidateAnnotations(pod.Annotations, meta.Child("annotations"))...)
	errs = append(errs, validateSpec(&pod.Spec, field.NewPath("spec"))...)
	p.addAll(ErrInvalid, errs)
}

func validateSpec(spec *corev1.PodSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateOneOf(path.Child("restartPolicy"), string(spec.RestartPolicy),
		string(corev1.RestartPolicyAlways), string(corev1.RestartPolicyOnFailure), string(corev1.RestartPolicyNever))...)
	errs = append(errs, validateOneOf(path.Child("dnsPolicy"), string(spec.DNSPolicy),
		string(corev1.DNSClusterFirst), string(corev1.DNSClusterFirstWithHostNet), string(corev1.DNSDefault), string(corev1.DNSNone))...)
	if spec.DNSPolicy == corev1.DNSNone && (spec.DNSConfig == nil || len(spec.DNSConfig.Nameservers) == 0) {
		errs = append(errs, field.Required(path.Child("dnsConfig", "nameservers"), "dnsPolicy None needs at least one nameserver"))
	}
	if g := spec.TerminationGracePeriodSeconds; g != nil && *g < 0 {
		errs = append(errs, field.Invalid(path.Child("terminationGracePeriodSeconds"), *g, "must be >= 0"))
	}
	if d := spec.ActiveDeadlineSeconds; d != nil && *d <= 0 {
		errs = append(errs, field.Invalid(path.Child("activeDeadlineSeconds"), *d, "must be > 0"))
	}
	if spec.Hostname != "" {
		for _, msg := range validation.IsDNS1123Label(spec.Hostname) {
			errs = append(errs, field.Invalid(path.Child("hostname"), spec.Hostname, msg))
		}
	}
	if spec.Subdomain != "" {
		for _, msg := range validation.IsDNS1123Label(spec.Subdomain) {
			errs = append(errs, field.Invalid(path.Child("subdomain"), spec.Subdomain, msg))
		}
	}

	volumes, volErrs := validateVolumes(spec.Volumes, path.Child("volumes"))
	errs = append(errs, volErrs...)

	if len(spec.Containers) == 0 {
		errs = append(errs, field.Required(path.Child("containers"), "a pod needs at least one container"))
	}
	names := sets.New[string]()
	for i := range spec.InitContainers {
		errs = append(errs, validateContainer(&spec.InitContainers[i], true, spec.HostNetwork, volumes, names, path.Child("initContainers").Index(i))...)
	}
	for i := range spec.Containers {
		errs = append(errs, validateContainer(&spec.Containers[i], false, spec.HostNetwork, volumes, names, path.Child("containers").Index(i))...)
	}
	return errs
}

func validateOneOf(path *field.Path, value string, allowed ...string) field.ErrorList {
	for _, a := range allowed {
		if value == a {
			return nil
		}
	}
	return field.ErrorList{field.NotSupported(path, value, allowed)}
}

// validateVolumes checks names and sources and returns the set of volume names.
func validateVolumes(volumes []corev1.Volume, path *field.Path) (sets.Set[string], field.ErrorList) {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, v := range volumes {
		vp := path.Index(i)
		if v.Name == "" {
			errs = append(errs, field.Required(vp.Child("name"), ""))
		}
		for _, msg := range validation.IsDNS1123Label(v.Name) {
			if v.Name != "" {
				errs = append(errs, field.Invalid(vp.Child("name"), v.Name, msg))
			}
		}
		if names.Has(v.Name) {
			errs = append(errs, field.Duplicate(vp.Child("name"), v.Name))
		}
		names.Insert(v.Name)
		if n := volumeSourceCount(&v.VolumeSource); n > 1 {
			errs = append(errs, field.Forbidden(vp, "may not specify more than one volume type"))
		}
		if hp := v.HostPath; hp != nil && hp.Path == "" {
			errs = append(errs, field.Required(vp.Child("hostPath", "path"), ""))
		}
		if ed := v.EmptyDir; ed != nil && ed.SizeLimit != nil && ed.SizeLimit.Sign() < 0 {
			errs = append(errs, field.Invalid(vp.Child("emptyDir", "sizeLimit"), ed.SizeLimit.String(), "must be >= 0"))
		}
	}
	return names, errs
}

// volumeSourceCount counts the volume types set in src (exactly one is valid).
func volumeSourceCount(src *corev1.VolumeSource) int {
	n := 0
	v := reflect.ValueOf(src).Elem()
	for i := 0; i < v.NumField(); i++ {
		if f := v.Field(i); f.Kind() == reflect.Pointer && !f.IsNil() {
			n++
		}
	}
	return n
}

func validateContainer(c *corev1.Container, isInit, hostNetwork bool, volumes, names sets.Set[string], path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if c.Name == "" {
		errs = append(errs, field.Required(path.Child("name"), ""))
	} else {
		for _, msg := range validation.IsDNS1123Label(c.Name) {
			errs = append(errs, field.Invalid(path.Child("name"), c.Name, msg))
		}
		if names.Has(c.Name) {
			errs = append(errs, field.Duplicate(path.Child("name"), c.Name))
		}
		names.Insert(c.Name)
	}
	if c.Image == "" {
		errs = append(errs, field.Required(path.Child("image"), ""))
	} else if strings.TrimSpace(c.Image) != c.Image {
		errs = append(errs, field.Invalid(path.Child("image"), c.Image, "must not have leading or trailing whitespace"))
	}
	errs = append(errs, validateOneOf(path.Child("imagePullPolicy"), string(c.ImagePullPolicy),
		string(corev1.PullAlways), string(corev1.PullIfNotPresent), string(corev1.PullNever))...)
	errs = append(errs, validateOneOf(path.Child("terminationMessagePolicy"), string(c.TerminationMessagePolicy),
		string(corev1.TerminationMessageReadFile), string(corev1.TerminationMessageFallbackToLogsOnError))...)
	sidecar := isInit && podutil.IsSidecar(c)
	if c.RestartPolicy != nil && !isInit {
		// Regular containers may set a restart policy only with the newer container restart
		// rules; leave that to the API server, but the value must be known.
		errs = append(errs, validateOneOf(path.Child("restartPolicy"), string(*c.RestartPolicy),
			string(corev1.ContainerRestartPolicyAlways), string(corev1.ContainerRestartPolicyOnFailure), string(corev1.ContainerRestartPolicyNever))...)
	} else if c.RestartPolicy != nil && !sidecar {
		errs = append(errs, field.NotSupported(path.Child("restartPolicy"), string(*c.RestartPolicy), []string{string(corev1.ContainerRestartPolicyAlways)}))
	}

	portNames := sets.New[string]()
	for i, port := range c.Ports {
		pp := path.Child("ports").Index(i)
		for _, msg := range validation.IsValidPortNum(int(port.ContainerPort)) {
			errs = append(errs, field.Invalid(pp.Child("containerPort"), port.ContainerPort, msg))
		}
		if port.HostPort != 0 {
			for _, msg := range validation.IsValidPortNum(int(port.HostPort)) {
				errs = append(errs, field.Invalid(pp.Child("hostPort"), port.HostPort, msg))
			}
		}
		if hostNetwork && port.HostPort != port.ContainerPort {
			errs = append(errs, field.Invalid(pp.Child("hostPort"), port.HostPort, "must match containerPort when hostNetwork is true"))
		}
		errs = append(errs, validateOneOf(pp.Child("protocol"), string(port.Protocol),
			string(corev1.ProtocolTCP), string(corev1.ProtocolUDP), string(corev1.ProtocolSCTP))...)
		if port.Name != "" {
			for _, msg := range validation.IsValidPortName(port.Name) {
				errs = append(errs, field.Invalid(pp.Child("name"), port.Name, msg))
			}
			if portNames.Has(port.Name) {
				errs = append(errs, field.Duplicate(pp.Child("name"), port.Name))
			}
			portNames.Insert(port.Name)
		}
	}

	for i, env := range c.Env {
		ep := path.Child("env").Index(i)
		if env.Name == "" {
			errs = append(errs, field.Required(ep.Child("name"), ""))
		}
		if env.ValueFrom != nil {
			if env.Value != "" {
				errs = append(errs, field.Invalid(ep.Child("valueFrom"), "", "may not be specified when `value` is not empty"))
			}
			from := env.ValueFrom
			n := countSet(from.FieldRef != nil, from.ResourceFieldRef != nil, from.ConfigMapKeyRef != nil, from.SecretKeyRef != nil, from.FileKeyRef != nil)
			if n != 1 {
				errs = append(errs, field.Invalid(ep.Child("valueFrom"), "", "must specify exactly one source"))
			}
			if f := from.FieldRef; f != nil && f.FieldPath == "" {
				errs = append(errs, field.Required(ep.Child("valueFrom", "fieldRef", "fieldPath"), ""))
			}
			if r := from.ResourceFieldRef; r != nil && r.Resource == "" {
				errs = append(errs, field.Required(ep.Child("valueFrom", "resourceFieldRef", "resource"), ""))
			}
		}
	}

	mountPaths := sets.New[string]()
	for i, m := range c.VolumeMounts {
		mp := path.Child("volumeMounts").Index(i)
		if !volumes.Has(m.Name) {
			errs = append(errs, field.NotFound(mp.Child("name"), m.Name))
		}
		if m.MountPath == "" {
			errs = append(errs, field.Required(mp.Child("mountPath"), ""))
		} else if mountPaths.Has(m.MountPath) {
			errs = append(errs, field.Invalid(mp.Child("mountPath"), m.MountPath, "must be unique"))
		}
		mountPaths.Insert(m.MountPath)
	}
	for i, d := range c.VolumeDevices {
		dp := path.Child("volumeDevices").Index(i)
		if !volumes.Has(d.Name) {
			errs = append(errs, field.NotFound(dp.Child("name"), d.Name))
		}
		if d.DevicePath == "" {
			errs = append(errs, field.Required(dp.Child("devicePath"), ""))
		}
	}

	probes := []struct {
		name  string
		probe *corev1.Probe
	}{{"livenessProbe", c.LivenessProbe}, {"readinessProbe", c.ReadinessProbe}, {"startupProbe", c.StartupProbe}}
	for _, pr := range probes {
		if pr.probe == nil {
			continue
		}
		pp := path.Child(pr.name)
		if isInit && !sidecar {
			errs = append(errs, field.Forbidden(pp, "may not be set for init containers"))
			continue
		}
		if isInit && pr.name == "readinessProbe" {
			errs = append(errs, field.Forbidden(pp, "may not be set for init containers"))
			continue
		}
		errs = append(errs, validateProbe(pr.probe, pr.name != "readinessProbe", portNames, pp)...)
	}
	if l := c.Lifecycle; l != nil {
		if isInit && !sidecar {
			errs = append(errs, field.Forbidden(path.Child("lifecycle"), "may not be set for init containers"))
		}
		errs = append(errs, validateHandler(l.PostStart, portNames, path.Child("lifecycle", "postStart"))...)
		errs = append(errs, validateHandler(l.PreStop, portNames, path.Child("lifecycle", "preStop"))...)
	}
	errs = append(errs, validateResources(&c.Resources, path.Child("resources"))...)
	return errs
}

func countSet(flags ...bool) int {
	n := 0
	for _, f := range flags {
		if f {
			n++
		}
	}
	return n
}

func validateProbe(p *corev1.Probe, mustSucceedOnce bool, portNames sets.Set[string], path *field.Path) field.ErrorList {
	var errs field.ErrorList
	h := p.ProbeHandler
	if n := countSet(h.Exec != nil, h.HTTPGet != nil, h.TCPSocket != nil, h.GRPC != nil); n != 1 {
		errs = append(errs, field.Invalid(path, "", fmt.Sprintf("must specify exactly one handler (exec, httpGet, tcpSocket or grpc), found %d", n)))
	}
	errs = append(errs, validateActions(h.Exec, h.HTTPGet, h.TCPSocket, portNames, path)...)
	if g := h.GRPC; g != nil {
		for _, msg := range validation.IsValidPortNum(int(g.Port)) {
			errs = append(errs, field.Invalid(path.Child("grpc", "port"), g.Port, msg))
		}
	}
	positive := func(name string, v int32) {
		if v < 1 {
			errs = append(errs, field.Invalid(path.Child(name), v, "must be >= 1"))
		}
	}
	positive("timeoutSeconds", p.TimeoutSeconds)
	positive("periodSeconds", p.PeriodSeconds)
	positive("successThreshold", p.SuccessThreshold)
	positive("failureThreshold", p.FailureThreshold)
	if p.InitialDelaySeconds < 0 {
		errs = append(errs, field.Invalid(path.Child("initialDelaySeconds"), p.InitialDelaySeconds, "must be >= 0"))
	}
	if mustSucceedOnce && p.SuccessThreshold != 1 {
		errs = append(errs, field.Invalid(path.Child("successThreshold"), p.SuccessThreshold, "must be 1"))
	}
	if g := p.TerminationGracePeriodSeconds; g != nil && *g <= 0 {
		errs = append(errs, field.Invalid(path.Child("terminationGracePeriodSeconds"), *g, "must be > 0"))
	}
	return errs
}

func validateHandler(h *corev1.LifecycleHandler, portNames sets.Set[string], path *field.Path) field.ErrorList {
	if h == nil {
		return nil
	}
	var errs field.ErrorList
	if n := countSet(h.Exec != nil, h.HTTPGet != nil, h.TCPSocket != nil, h.Sleep != nil); n != 1 {
		errs = append(errs, field.Invalid(path, "", fmt.Sprintf("must specify exactly one handler (exec, httpGet, tcpSocket or sleep), found %d", n)))
	}
	if s := h.Sleep; s != nil && s.Seconds < 0 {
		errs = append(errs, field.Invalid(path.Child("sleep", "seconds"), s.Seconds, "must be >= 0"))
	}
	return append(errs, validateActions(h.Exec, h.HTTPGet, h.TCPSocket, portNames, path)...)
}

func validateActions(exec *corev1.ExecAction, httpGet *corev1.HTTPGetAction, tcp *corev1.TCPSocketAction, portNames sets.Set[string], path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if exec != nil && len(exec.Command) == 0 {
		errs = append(errs, field.Required(path.Child("exec", "command"), ""))
	}
	if httpGet != nil {
		errs = append(errs, validatePortRef(httpGet.Port, portNames, path.Child("httpGet", "port"))...)
		errs = append(errs, validateOneOf(path.Child("httpGet", "scheme"), string(httpGet.Scheme), string(corev1.URISchemeHTTP), string(corev1.URISchemeHTTPS))...)
		for i, hdr := range httpGet.HTTPHeaders {
			for _, msg := range validation.IsHTTPHeaderName(hdr.Name) {
				errs = append(errs, field.Invalid(path.Child("httpGet", "httpHeaders").Index(i).Child("name"), hdr.Name, msg))
			}
		}
	}
	if tcp != nil {
		errs = append(errs, validatePortRef(tcp.Port, portNames, path.Child("tcpSocket", "port"))...)
	}
	return errs
}

// validatePortRef accepts a port number or the name of one of the container's ports.
func validatePortRef(port intstr.IntOrString, portNames sets.Set[string], path *field.Path) field.ErrorList {
	if !portIsSet(port) {
		return field.ErrorList{field.Required(path, "")}
	}
	if port.Type == intstr.Int {
		var errs field.ErrorList
		for _, msg := range validation.IsValidPortNum(int(port.IntVal)) {
			errs = append(errs, field.Invalid(path, port.IntVal, msg))
		}
		return errs
	}
	var errs field.ErrorList
	for _, msg := range validation.IsValidPortName(port.StrVal) {
		errs = append(errs, field.Invalid(path, port.StrVal, msg))
	}
	if len(errs) == 0 && !portNames.Has(port.StrVal) {
		errs = append(errs, field.NotFound(path, port.StrVal))
	}
	return errs
}

// portIsSet reports whether a probe or handler port was given at all.
func portIsSet(p intstr.IntOrString) bool {
	return p.Type == intstr.String && p.StrVal != "" || p.Type == intstr.Int && p.IntVal != 0
}

func validateResources(r *corev1.ResourceRequirements, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, list := range []struct {
		name string
		rl   corev1.ResourceList
	}{{"limits", r.Limits}, {"requests", r.Requests}} {
		for name, q := range list.rl {
			rp := path.Child(list.name).Key(string(name))
			for _, msg := range validation.IsQualifiedName(string(name)) {
				errs = append(errs, field.Invalid(rp, name, msg))
			}
			if q.Sign() < 0 {
				errs = append(errs, field.Invalid(rp, q.String(), "must be greater than or equal to 0"))
			}
		}
	}
	for name, req := range r.Requests {
		if limit, ok := r.Limits[name]; ok && req.Cmp(limit) > 0 {
			errs = append(errs, field.Invalid(path.Child("requests").Key(string(name)), req.String(),
				fmt.Sprintf("must be less than or equal to %s limit of %s", name, limit.String())))
		}
	}
	return errs
}
