package env

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// ErrUnsupportedFieldPath is wrapped by FieldValue's error for a path the downward API does not
// resolve (spec.restartPolicy, status.phase, a subscript on anything but labels and
// annotations, ...).
var ErrUnsupportedFieldPath = errors.New("unsupported fieldPath")

// ErrHostIPUnknown is wrapped by FieldValue's error for status.hostIP(s) when PodFacts hold no
// host address: the kubelet fails the container rather than give it an empty address.
var ErrHostIPUnknown = errors.New("host IP unknown")

// FieldValue resolves a downward API fieldRef path on pod, as the kubelet does for env
// (podFieldSelectorRuntimeValue) and downwardAPI volumes (fieldpath.ExtractFieldPathAsString):
//
//   - metadata.name, metadata.namespace, metadata.uid
//   - metadata.labels, metadata.annotations: every pair as a key="value" line (value quoted
//     with Go's %q escaping), sorted by key, lines joined by "\n" with no trailing newline
//   - metadata.labels['k'], metadata.annotations['k']: that value, "" when absent; k must be a
//     qualified name (annotation keys compared lower-cased, as the kubelet does)
//   - spec.nodeName (spec.host is its old name), spec.serviceAccountName
//   - status.hostIP, status.hostIPs, status.podIP, status.podIPs from facts; the plural forms
//     are the addresses joined by ",". A pod without an address yet gets "".
//
// Anything else is an error wrapping ErrUnsupportedFieldPath that names the path.
func FieldValue(pod *corev1.Pod, fieldPath string, facts PodFacts) (string, error) {
	if path, key, ok := splitSubscript(fieldPath); ok {
		switch path {
		case "metadata.labels":
			if errs := validation.IsQualifiedName(key); len(errs) != 0 {
				return "", fmt.Errorf("invalid key subscript in %s: %s", fieldPath, strings.Join(errs, ";"))
			}
			return pod.Labels[key], nil
		case "metadata.annotations":
			// The kubelet lower-cases the key only to validate it: annotation keys of any case
			// are allowed, the lookup is on the key as written.
			if errs := validation.IsQualifiedName(strings.ToLower(key)); len(errs) != 0 {
				return "", fmt.Errorf("invalid key subscript in %s: %s", fieldPath, strings.Join(errs, ";"))
			}
			return pod.Annotations[key], nil
		default:
			return "", fmt.Errorf("%w %q: only metadata.labels and metadata.annotations take a subscript", ErrUnsupportedFieldPath, fieldPath)
		}
	}

	switch fieldPath {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "metadata.labels":
		return formatMap(pod.Labels), nil
	case "metadata.annotations":
		return formatMap(pod.Annotations), nil
	case "spec.nodeName", "spec.host":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.hostIP":
		ips := facts.hostIPs()
		if len(ips) == 0 {
			return "", fmt.Errorf("fieldPath %q: %w", fieldPath, ErrHostIPUnknown)
		}
		return ips[0], nil
	case "status.hostIPs":
		ips := facts.hostIPs()
		if len(ips) == 0 {
			return "", fmt.Errorf("fieldPath %q: %w", fieldPath, ErrHostIPUnknown)
		}
		return strings.Join(ips, ","), nil
	case "status.podIP":
		if ips := facts.podIPs(); len(ips) > 0 {
			return ips[0], nil
		}
		return "", nil
	case "status.podIPs":
		return strings.Join(facts.podIPs(), ","), nil
	}
	return "", fmt.Errorf("%w %q", ErrUnsupportedFieldPath, fieldPath)
}

// splitSubscript splits "path['key']" into path and key; ok is false for a path without a
// subscript (or with an empty path before it), which is then looked up as a whole.
func splitSubscript(fieldPath string) (path, key string, ok bool) {
	rest, found := strings.CutSuffix(fieldPath, "']")
	if !found {
		return fieldPath, "", false
	}
	path, key, found = strings.Cut(rest, "['")
	if !found || path == "" {
		return fieldPath, "", false
	}
	return path, key, true
}

// formatMap writes m the way the kubelet's downward API does, so that a file or variable
// holding all labels reads the same on this node as on a kubelet's.
func formatMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b []byte
	for _, k := range keys {
		if len(b) > 0 {
			b = append(b, '\n')
		}
		b = append(b, k...)
		b = append(b, '=')
		b = strconv.AppendQuote(b, m[k])
	}
	return string(b)
}
