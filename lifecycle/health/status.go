package health

import (
	"context"
	"fmt"
)

// The runtime conditions a Checker reports, CRI's RuntimeCondition types.
const (
	RuntimeReady = "RuntimeReady"
	NetworkReady = "NetworkReady"
)

// Condition is one runtime condition, as CRI's RuntimeCondition.
type Condition struct {
	Type    string
	Status  bool
	Reason  string
	Message string
}

// String is the kubelet's rendering of a runtime condition (kubecontainer.RuntimeCondition),
// which its Ready messages quote.
func (c *Condition) String() string {
	return fmt.Sprintf("%s=%t reason:%s message:%s", c.Type, c.Status, c.Reason, c.Message)
}

// Status is what a runtime says of itself, as CRI's StatusResponse.
type Status struct {
	Conditions []Condition
}

// Condition returns the condition of type t, nil when the status has none.
func (s *Status) Condition(t string) *Condition {
	if s == nil {
		return nil
	}
	for i := range s.Conditions {
		if s.Conditions[i].Type == t {
			return &s.Conditions[i]
		}
	}
	return nil
}

// Checker reports a runtime's health; an error means it could not be asked (it is down).
type Checker interface {
	Status(ctx context.Context) (*Status, error)
}

// CheckerFunc is a function as a Checker.
type CheckerFunc func(ctx context.Context) (*Status, error)

// Status calls f.
func (f CheckerFunc) Status(ctx context.Context) (*Status, error) { return f(ctx) }
