// decode.go holds how a manifest becomes valid static pods, in the order DecodeManifest
// takes each pod: the bytes decoded strictly, as the API server decodes (one Pod, a PodList
// or a YAML stream); the API server's defaults; the static-pod defaults (name, UID,
// annotations, the NoExecute toleration); the API server's validation (validatePod); the
// refusal of references to API objects (restrictPod); and, across the manifest's pods, unique
// names and UIDs (checkUnique). The problems found are decode_errors.go's.

package sources

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/clock"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/vk-static/vk-static/podutil"
)

// MaxManifestBytes is the largest manifest file or HTTP response the sources accept.
const MaxManifestBytes = 10 << 20

// DecodeOptions says where a manifest came from and for which node it is decoded.
type DecodeOptions struct {
	// NodeName is required: it suffixes pod names, is set as spec.nodeName and is part of the UID.
	NodeName string
	// Source is podutil.FileSource or podutil.HTTPSource.
	Source string
	// Location is the file path or URL: part of the UID hash and of every error message.
	Location string
	// Clock stamps kubernetes.io/config.seen; nil means the real clock.
	Clock clock.PassiveClock
}

// DecodeManifest turns a manifest — YAML or JSON; one Pod, a v1 PodList, or several documents in
// a YAML stream — into static pods with the kubelet's defaults applied: name
// "<name>-<lowercased node>", namespace "default" when empty, spec.nodeName, a UID that is a
// stable hash of the decoded pod, node and location (unless the manifest sets one), the
// config.hash / config.source / config.seen annotations, and the API server's defaults. A pod
// from podutil.FileSource also tolerates every NoExecute taint; one from podutil.HTTPSource
// does not (the kubelet adds that toleration to file-source pods only).
//
// The manifest is validated like the API server would on create and rejected when a pod
// references API objects. The error is a *DecodeError listing every problem; no pods are
// returned with it. An empty manifest is an empty set of pods.
func DecodeManifest(data []byte, opts DecodeOptions) ([]*corev1.Pod, error) {
	if opts.NodeName == "" {
		return nil, errors.New("sources: DecodeOptions.NodeName is required")
	}
	if opts.Source != podutil.FileSource && opts.Source != podutil.HTTPSource {
		return nil, fmt.Errorf("sources: DecodeOptions.Source must be %q or %q, not %q", podutil.FileSource, podutil.HTTPSource, opts.Source)
	}
	var found []FieldProblem
	whole := problems{list: &found}
	if len(data) > MaxManifestBytes {
		whole.add(ErrTooLarge, "", "%d bytes exceeds the limit of %d bytes", len(data), MaxManifestBytes)
		return nil, &DecodeError{Location: opts.Location, Problems: found}
	}
	docs, err := splitDocuments(data)
	if err != nil {
		whole.add(ErrSyntax, "", "%v", err)
		return nil, &DecodeError{Location: opts.Location, Problems: found}
	}

	var pods []*corev1.Pod
	var where []problems // the collector of each pod, for the cross-pod checks below
	for i, doc := range docs {
		p := problems{doc: i + 1, list: &found}
		for _, item := range decodeDocument(doc, p) {
			applyAPIDefaults(item.pod)
			applyStaticDefaults(item.pod, opts)
			validatePod(item.pod, item.problems)
			restrictPod(item.pod, item.problems)
			pods = append(pods, item.pod)
			where = append(where, item.problems)
		}
	}
	checkUnique(pods, where)
	if len(found) > 0 {
		return nil, &DecodeError{Location: opts.Location, Problems: found}
	}

	clk := opts.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	seen := clk.Now().UTC().Format(time.RFC3339Nano)
	for _, pod := range pods {
		pod.Annotations[podutil.ConfigFirstSeenAnnotationKey] = seen
	}
	return pods, nil
}

// splitDocuments splits a YAML stream at "---" lines. JSON is YAML, so a JSON object is one
// document.
func splitDocuments(data []byte) ([][]byte, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		docs = append(docs, doc)
	}
}

// decodedPod is one pod of a document and where to report its problems.
type decodedPod struct {
	pod      *corev1.Pod
	problems problems
}

type typeMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

// decodeDocument decodes one YAML document into its pods: none for an empty document, one for a
// Pod, every item of a PodList. Problems are recorded in p.
func decodeDocument(doc []byte, p problems) []decodedPod {
	raw, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		p.add(ErrSyntax, "", "%v", err)
		return nil
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil // only comments or blank lines
	}
	if raw[0] != '{' {
		p.add(ErrNotAPod, "", "expected a v1 Pod or PodList object, got %s", describeJSON(raw))
		return nil
	}
	var tm typeMeta
	if err := json.Unmarshal(raw, &tm); err != nil {
		p.add(ErrNotAPod, "", "expected a v1 Pod or PodList object: %v", err)
		return nil
	}
	switch {
	case tm.APIVersion == "v1" && tm.Kind == "Pod":
		pod := decodePod(raw, p)
		if pod == nil {
			return nil
		}
		return []decodedPod{{pod: pod, problems: p}}
	case tm.APIVersion == "v1" && tm.Kind == "PodList":
		return decodePodList(raw, p)
	default:
		p.add(ErrNotAPod, "", "apiVersion %q kind %q: expected apiVersion \"v1\" and kind \"Pod\" or \"PodList\"", tm.APIVersion, tm.Kind)
		return nil
	}
}

func decodePodList(raw []byte, p problems) []decodedPod {
	var list struct {
		typeMeta `json:",inline"`
		Metadata metav1.ListMeta   `json:"metadata"`
		Items    []json.RawMessage `json:"items"`
	}
	if !strictUnmarshal(raw, &list, p) {
		return nil
	}
	var pods []decodedPod
	for i, item := range list.Items {
		ip := p.at(fmt.Sprintf("items[%d].", i))
		var tm typeMeta
		if err := json.Unmarshal(item, &tm); err != nil {
			ip.add(ErrNotAPod, "", "expected a Pod object: %v", err)
			continue
		}
		if (tm.APIVersion != "" && tm.APIVersion != "v1") || (tm.Kind != "" && tm.Kind != "Pod") {
			ip.add(ErrNotAPod, "", "apiVersion %q kind %q: a v1 PodList holds v1 Pods", tm.APIVersion, tm.Kind)
			continue
		}
		if pod := decodePod(item, ip); pod != nil {
			pods = append(pods, decodedPod{pod: pod, problems: ip})
		}
	}
	return pods
}

func decodePod(raw []byte, p problems) *corev1.Pod {
	pod := &corev1.Pod{}
	if !strictUnmarshal(raw, pod, p) {
		checkQuantities(raw, p)
		return nil
	}
	pod.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
	return pod
}

// strictUnmarshal decodes like the API server with fieldValidation=Strict: field names are
// case-sensitive, and unknown or duplicate fields are errors (a typo such as "comand" must not
// silently drop the command).
func strictUnmarshal(raw []byte, into any, p problems) bool {
	strictErrs, err := sigsjson.UnmarshalStrict(raw, into, sigsjson.DisallowDuplicateFields, sigsjson.DisallowUnknownFields)
	if err != nil {
		p.invalid("", "%v", err)
		return false
	}
	for _, e := range strictErrs {
		p.invalid("", "%v", e)
	}
	return len(strictErrs) == 0
}

// checkQuantities finds the resource quantities that failed to parse, so the error can name the
// field (the JSON decoder's error does not).
func checkQuantities(raw []byte, p problems) {
	var shape struct {
		Spec struct {
			Overhead       map[string]any       `json:"overhead"`
			Containers     []containerResources `json:"containers"`
			InitContainers []containerResources `json:"initContainers"`
		} `json:"spec"`
	}
	if json.Unmarshal(raw, &shape) != nil {
		return
	}
	check := func(path string, list map[string]any) {
		for name, v := range list {
			s := fmt.Sprint(v)
			if _, err := resource.ParseQuantity(s); err != nil {
				p.invalid(fmt.Sprintf("%s[%s]", path, name), "%q is not a resource quantity: %v", s, err)
			}
		}
	}
	check("spec.overhead", shape.Spec.Overhead)
	for kind, list := range map[string][]containerResources{"containers": shape.Spec.Containers, "initContainers": shape.Spec.InitContainers} {
		for i, c := range list {
			check(fmt.Sprintf("spec.%s[%d].resources.limits", kind, i), c.Resources.Limits)
			check(fmt.Sprintf("spec.%s[%d].resources.requests", kind, i), c.Resources.Requests)
		}
	}
}

type containerResources struct {
	Resources struct {
		Limits   map[string]any `json:"limits"`
		Requests map[string]any `json:"requests"`
	} `json:"resources"`
}

func describeJSON(raw []byte) string {
	switch raw[0] {
	case '[':
		return "a list"
	case '"':
		return "a string"
	default:
		return "a scalar"
	}
}

// The API server's defaults for the fields a static pod manifest usually leaves out
// (k8s.io/kubernetes pkg/apis/core/v1/defaults.go). They are applied before the UID is hashed,
// so writing a default out explicitly yields the same UID as leaving it out.
const (
	defaultTerminationGracePeriodSeconds = int64(30)
	defaultSchedulerName                 = corev1.DefaultSchedulerName
	defaultTerminationMessagePath        = corev1.TerminationMessagePathDefault
	defaultProbeTimeoutSeconds           = int32(1)
	defaultProbePeriodSeconds            = int32(10)
	defaultProbeSuccessThreshold         = int32(1)
	defaultProbeFailureThreshold         = int32(3)
	defaultDownwardAPIMode               = corev1.DownwardAPIVolumeSourceDefaultMode
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

// checkUnique rejects a manifest in which two pods share a full name or a UID: the merger could
// keep only one of them, and which one would depend on the order of documents.
func checkUnique(pods []*corev1.Pod, where []problems) {
	names := map[string]bool{}
	uids := map[types.UID]bool{}
	for i, pod := range pods {
		if pod.Name == "" {
			continue
		}
		if full := podutil.FullName(pod); names[full] {
			where[i].add(ErrDuplicateName, "metadata.name", "pod %s/%s appears more than once in this manifest", pod.Namespace, pod.Name)
		} else {
			names[full] = true
		}
		if uids[pod.UID] {
			where[i].invalid("metadata.uid", "uid %q appears more than once in this manifest", pod.UID)
		}
		uids[pod.UID] = true
	}
}
