package env

import (
	"fmt"
	"strings"
)

// EnvVar is one variable of a container's environment.
type EnvVar struct {
	Name  string
	Value string
}

// Result is a container's environment as Build computes it.
type Result struct {
	// Env holds each name once, in the order names were first defined (envFrom sources in
	// order, each source's keys sorted, then env in order), with the value of the last
	// definition.
	Env []EnvVar
	// SkippedKeys are the envFrom keys that cannot be variable names, one entry per source that
	// had some; the caller reports each as an Event (InvalidEnvironmentVariableNamesReason,
	// SkippedKeys.Message).
	SkippedKeys []SkippedKeys
}

// Strings returns the environment as "NAME=value" entries, in Env's order, for exec.Cmd.Env.
func (r Result) Strings() []string {
	out := make([]string, len(r.Env))
	for i, v := range r.Env {
		out[i] = v.Name + "=" + v.Value
	}
	return out
}

// InvalidEnvironmentVariableNamesReason is the reason of the Event reporting SkippedKeys, the
// kubelet's.
const InvalidEnvironmentVariableNamesReason = "InvalidEnvironmentVariableNames"

// SkippedKeys are the keys of one envFrom source left out of the environment because, with the
// source's prefix, they are not environment variable names: empty, or holding '=' or a byte
// that is not printable ASCII. An object read from the API server never has such keys (config
// map and secret keys are [-._a-zA-Z0-9]+ and the prefix is validated), so this reports data
// that did not come through API validation.
type SkippedKeys struct {
	// Kind is "configMap" or "secret".
	Kind      string
	Namespace string
	Name      string
	// Keys are sorted, with the prefix.
	Keys []string
}

// Message is the Event message, worded as the kubelet's was when it still skipped keys.
func (s SkippedKeys) Message() string {
	return fmt.Sprintf("Keys [%s] from the EnvFrom %s %s/%s were skipped since they are considered invalid environment variable names.",
		strings.Join(s.Keys, ", "), s.Kind, s.Namespace, s.Name)
}
