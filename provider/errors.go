package provider

import (
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Provider errors are classified by kind, through any amount of %w wrapping.
var (
	// ErrNotFound: the provider does not run the pod (GetPod, GetPodStatus, DeletePod), or the
	// pod has no such container (a capability such as [ContainerLogsHandler]).
	ErrNotFound = errors.New("not found")
	// ErrInvalidInput: the pod cannot be run as specified, or a capability's request cannot be
	// served as asked (an empty command, an undeclared port); retrying will not help.
	ErrInvalidInput = errors.New("invalid input")
)

// NotFound returns an error that IsNotFound recognises.
func NotFound(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrNotFound, fmt.Sprintf(format, args...))
}

// InvalidInput returns an error that IsInvalidInput recognises.
func InvalidInput(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidInput, fmt.Sprintf(format, args...))
}

// IsNotFound reports whether err, or any error it wraps, is a not-found error: ErrNotFound, or
// the API machinery's NotFound (a provider backed by a Kubernetes API, or a NodeGetter's
// convention) — either way "it does not exist", so that deleting it is done, not retried.
func IsNotFound(err error) bool { return errors.Is(err, ErrNotFound) || apierrors.IsNotFound(err) }

// IsInvalidInput reports whether err, or any error it wraps, is an invalid-input error.
func IsInvalidInput(err error) bool { return errors.Is(err, ErrInvalidInput) }
