// decode.go holds how a manifest becomes valid static pods, in the order DecodeManifest
// takes each pod: the bytes decoded strictly, as the API server decodes (one Pod, a PodList
// or a YAML stream); the API server's defaults and the static-pod defaults ([applyAPIDefaults];
// name, UID, annotations, the NoExecute toleration: [applyStaticDefaults]); the API server's
// validation ([validatePod]); the refusal of references to API objects ([restrictPod]); and, across
// the manifest's pods, unique names and UIDs ([checkUnique]). The problems found are the
// [FieldProblem] values of a [DecodeError]. The kubelet splits it the same way: config/common.go
// decodes and defaults, its validation is the API server's.

package sources

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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
