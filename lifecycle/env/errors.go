package env

import (
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Errors Build wraps, for a caller that must tell them apart. Every Build error is what the
// kubelet reports with reason CreateContainerConfigError; an object the API server does not
// have keeps its NotFound (apierrors.IsNotFound), any other failure to read it its own error.
var (
	// ErrKeyNotFound: a required configMapKeyRef, secretKeyRef or fileKeyRef names a key its
	// object or file lacks.
	ErrKeyNotFound = errors.New("key not found")
	// ErrNoObjectGetter: the container references a config map or secret and Build was given
	// no ObjectGetter — optional or not, as the kubelet without an API client.
	ErrNoObjectGetter = errors.New("no ObjectGetter to read config maps and secrets")
	// ErrUnsupportedSource: a valueFrom this package does not resolve (a fieldRef of another
	// apiVersion than v1, or a valueFrom with no source set).
	ErrUnsupportedSource = errors.New("unsupported env source")
)

// describedError reads as its own message and unwraps to its cause: the message says what
// the cause's would say again (`secret "db" not found` rather than that and `secrets "db" not
// found`), the cause stays for errors.Is and apierrors.IsNotFound.
type describedError struct {
	msg   string
	cause error
}

func (e *describedError) Error() string { return e.msg }
func (e *describedError) Unwrap() error { return e.cause }

// objectError is the error for reading object kind/name for the variable (or envFrom) at where.
func objectError(where, kind, name string, err error) error {
	switch {
	case apierrors.IsNotFound(err):
		return &describedError{msg: fmt.Sprintf("%s: %s %q not found", where, kind, name), cause: err}
	case errors.Is(err, ErrNoObjectGetter):
		return &describedError{msg: fmt.Sprintf("%s: %s %q cannot be read: no API client for this pod", where, kind, name), cause: err}
	}
	return fmt.Errorf("%s: reading %s %q: %w", where, kind, name, err)
}

// missingKeyError is the error for a required key absent from object kind/name.
func missingKeyError(where, kind, name, key string) error {
	return &describedError{msg: fmt.Sprintf("%s: %s %q has no key %q", where, kind, name, key), cause: ErrKeyNotFound}
}
