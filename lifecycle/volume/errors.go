package volume

import (
	"fmt"
)

// FieldError is a refusal of the pod's spec: this node will not run the pod as written,
// whatever is retried, because a field asks for something it does not support or does not
// allow. Pod volumes are immutable, so a caller fails the pod (or reports it) instead of
// retrying. Every other error from Setup, Refresh and Mounts may pass on a later try.
type FieldError struct {
	// Field is the path of the refused field in the pod, e.g. spec.volumes[2].hostPath.path.
	Field string
	// Value is the refused value, quoted in the message when set.
	Value string
	// Detail says what is wrong and what to do.
	Detail string
}

func (e *FieldError) Error() string {
	if e.Value != "" {
		return fmt.Sprintf("%s %q: %s", e.Field, e.Value, e.Detail)
	}
	return e.Field + ": " + e.Detail
}

func refuse(field, value, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Value: value, Detail: fmt.Sprintf(format, args...)}
}

// MissingObjectError is a required ConfigMap or Secret (or one of its keys) that the API
// server does not have. The kubelet keeps such a pod in ContainerCreating with FailedMount
// events until the object appears, so a caller retries; the message says what to create.
type MissingObjectError struct {
	// Field is the volume source that names the object, e.g. spec.volumes[1].configMap,
	// or the item that names the key, e.g. spec.volumes[1].configMap.items[0].key.
	Field     string
	Kind      string // "ConfigMap" or "Secret"
	Namespace string
	Name      string
	// Key is the missing key; empty when the whole object is missing.
	Key string
	// Err is the API server's answer for a missing object (a NotFound); nil for a missing key.
	Err error
}

func (e *MissingObjectError) Error() string {
	if e.Key != "" {
		return fmt.Sprintf("%s: %s %s/%s has no key %q (create the key, or mark the source optional)",
			e.Field, e.Kind, e.Namespace, e.Name, e.Key)
	}
	return fmt.Sprintf("%s: %s %s/%s not found (create it, or mark the source optional)",
		e.Field, e.Kind, e.Namespace, e.Name)
}

func (e *MissingObjectError) Unwrap() error { return e.Err }
