package env

import (
	corev1 "k8s.io/api/core/v1"
)

// Command returns container c's command and args, each with $(VAR) references expanded against
// env as the kubelet does (see Expand: $$ is a literal $, an unknown $(X) stays as written). env
// is Build's Result.Env. They are returned apart, as CRI takes them: an empty command means the
// image's entrypoint, which only a runtime that runs images knows.
func Command(c *corev1.Container, env []EnvVar) (command, args []string) {
	vars := make(map[string]string, len(env))
	for _, v := range env {
		vars[v.Name] = v.Value
	}
	lookup := lookupIn(vars)
	expand := func(in []string) []string {
		if len(in) == 0 {
			return nil
		}
		out := make([]string, len(in))
		for i, s := range in {
			out[i] = Expand(s, lookup)
		}
		return out
	}
	return expand(c.Command), expand(c.Args)
}
