package env

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// ErrNoCommand is wrapped by Command's error for a container without a command: the argv
// would start with the image's entrypoint, which a runtime that does not run images does not
// know. The caller reports it with reason NoCommand.
var ErrNoCommand = errors.New("container has no command")

// Command returns the argv that starts container c: its command then its args, each with
// $(VAR) references expanded against env as the kubelet does (see Expand: $$ is a literal $,
// an unknown $(X) stays as written). env is Build's Result.Env.
//
// A container without a command (with or without args) is an error wrapping ErrNoCommand: its
// argv[0] is the image's entrypoint.
func Command(c *corev1.Container, env []EnvVar) ([]string, error) {
	if len(c.Command) == 0 {
		return nil, fmt.Errorf("container %q: %w: the image entrypoint is not known to this runtime, set command", c.Name, ErrNoCommand)
	}
	vars := make(map[string]string, len(env))
	for _, v := range env {
		vars[v.Name] = v.Value
	}
	lookup := lookupIn(vars)
	argv := make([]string, 0, len(c.Command)+len(c.Args))
	for _, s := range c.Command {
		argv = append(argv, Expand(s, lookup))
	}
	for _, s := range c.Args {
		argv = append(argv, Expand(s, lookup))
	}
	return argv, nil
}
