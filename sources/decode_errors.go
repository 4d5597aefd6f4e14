package sources

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Classes of decode failure, for errors.Is on a *DecodeError (or a Problem's Err).
var (
	// ErrSyntax: the input is not YAML or JSON.
	ErrSyntax = errors.New("malformed YAML or JSON")
	// ErrNotAPod: a document is not a v1 Pod or v1 PodList.
	ErrNotAPod = errors.New("not a v1 Pod or PodList")
	// ErrInvalid: the pod would be refused by the API server's validation.
	ErrInvalid = errors.New("invalid pod")
	// ErrForbiddenReference: the pod references API objects, which a static pod cannot do.
	ErrForbiddenReference = errors.New("static pods cannot reference API objects")
	// ErrTooLarge: the file or response exceeds MaxManifestBytes.
	ErrTooLarge = errors.New("manifest too large")
	// ErrDuplicateName: two pods claim the same full name (name_namespace).
	ErrDuplicateName = errors.New("duplicate pod name")
)

// FieldProblem is one thing wrong with a manifest.
type FieldProblem struct {
	// Document is the 1-based position of the YAML document in the stream (0: the whole input).
	Document int
	// Field is the path of the offending field, e.g. "spec.containers[1].name" (may be empty).
	Field string
	// Class is one of the Err* values above.
	Class error
	// Detail says what is wrong with the field.
	Detail string
}

func (p FieldProblem) String() string {
	var b strings.Builder
	if p.Document > 0 {
		fmt.Fprintf(&b, "document %d: ", p.Document)
	}
	if p.Field != "" {
		b.WriteString(p.Field)
		b.WriteString(": ")
	}
	if errors.Is(p.Class, ErrSyntax) {
		b.WriteString(ErrSyntax.Error())
		b.WriteString(": ")
	}
	b.WriteString(p.Detail)
	if errors.Is(p.Class, ErrForbiddenReference) {
		b.WriteString(" (")
		b.WriteString(ErrForbiddenReference.Error())
		b.WriteString(")")
	}
	return b.String()
}

// DecodeError is every problem found in one manifest (file or HTTP body).
type DecodeError struct {
	Location string
	Problems []FieldProblem
}

func (e *DecodeError) Error() string {
	if len(e.Problems) == 1 {
		return e.Location + ": " + e.Problems[0].String()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d problems:", e.Location, len(e.Problems))
	for _, p := range e.Problems {
		b.WriteString("\n  ")
		b.WriteString(e.Location)
		b.WriteString(": ")
		b.WriteString(p.String())
	}
	return b.String()
}

// Unwrap returns the distinct classes of the problems, so errors.Is(err, ErrInvalid) works.
func (e *DecodeError) Unwrap() []error {
	var classes []error
	for _, p := range e.Problems {
		if p.Class != nil && !containsErr(classes, p.Class) {
			classes = append(classes, p.Class)
		}
	}
	return classes
}

func containsErr(list []error, err error) bool {
	for _, e := range list {
		if e == err {
			return true
		}
	}
	return false
}

// problems collects FieldProblems for one document; prefix locates a pod inside it (a PodList
// item).
type problems struct {
	doc    int
	prefix string
	list   *[]FieldProblem
}

// at returns a collector whose fields are prefixed, e.g. "items[2].".
func (p problems) at(prefix string) problems {
	p.prefix += prefix
	return p
}

func (p problems) add(class error, field, format string, args ...any) {
	*p.list = append(*p.list, FieldProblem{Document: p.doc, Field: p.prefix + field, Class: class, Detail: fmt.Sprintf(format, args...)})
}

func (p problems) invalid(field, format string, args ...any) {
	p.add(ErrInvalid, field, format, args...)
}

// addAll records field.Errors (from validation) under one class.
func (p problems) addAll(class error, errs field.ErrorList) {
	for _, e := range errs {
		p.add(class, e.Field, "%s", e.ErrorBody())
	}
}
