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
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
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

// portIsSet reports whether a probe or handler port was given at all.
func portIsSet(p intstr.IntOrString) bool {
	return p.Type == intstr.String && p.StrVal != "" || p.Type == intstr.Int && p.IntVal != 0
}
