package probe

import (
	"strings"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
)

// expandStatic expands $(VAR) in an exec probe's command from the container's static env values,
// as the kubelet's ExpandContainerCommandOnlyStatic: valueFrom variables count as empty values
// (their Value field), unknown references stay as written, and $$ is a literal $.
func expandStatic(command []string, env []corev1.EnvVar) []string {
	if len(command) == 0 {
		return nil
	}
	values := make(map[string]string, len(env))
	for _, e := range env {
		values[e.Name] = e.Value
	}
	out := make([]string, len(command))
	for i, arg := range command {
		out[i] = expand(arg, values)
	}
	return out
}

// expand is Kubernetes' variable expansion ($(NAME), $$ escapes) over one string.
func expand(input string, values map[string]string) string {
	var buf strings.Builder
	checkpoint := 0
	for cursor := 0; cursor < len(input); cursor++ {
		if input[cursor] != '$' || cursor+1 >= len(input) {
			continue
		}
		buf.WriteString(input[checkpoint:cursor])
		read, isVar, advance := readVariableName(input[cursor+1:])
		switch {
		case !isVar:
			buf.WriteString(read)
		default:
			if v, ok := values[read]; ok {
				buf.WriteString(v)
			} else {
				buf.WriteString("$(" + read + ")")
			}
		}
		cursor += advance
		checkpoint = cursor + 1
	}
	return buf.String() + input[checkpoint:]
}

// readVariableName reads what follows a '$': the name of a $(NAME) reference (isVar), or the
// text to copy as is, and how many bytes it consumed.
func readVariableName(input string) (read string, isVar bool, advance int) {
	r, size := utf8.DecodeRuneInString(input)
	switch r {
	case '$':
		return input[:size], false, size
	case '(':
		if end := strings.IndexByte(input[1:], ')'); end >= 0 {
			return input[1 : end+1], true, end + 2
		}
		// An unclosed reference stays as written.
		return "$(", false, 1
	default:
		return "$" + string(r), false, size
	}
}
