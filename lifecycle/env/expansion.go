package env

import (
	"strings"
	"unicode/utf8"
)

// Expand replaces the $(NAME) references in s the way the kubelet does for env values,
// command and args (third_party/forked/golang/expansion):
//
//   - $(NAME) is lookup(NAME) when lookup knows NAME, and stays "$(NAME)" when it does not;
//   - $$ is a literal $, so "$$(NAME)" is the text "$(NAME)";
//   - any other $ is kept, as is a "$(" never closed by ")" and a $ ending s.
//
// One quirk is kept on purpose: a $ followed by a byte that is not valid UTF-8 yields "$"
// and U+FFFD in place of that byte, as the kubelet's does.
func Expand(s string, lookup func(name string) (string, bool)) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	copied := 0 // s[:copied] is in b or consumed
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			continue
		}
		b.WriteString(s[copied:i])
		next := s[i+1:]
		r, size := utf8.DecodeRuneInString(next)
		switch r {
		case '$':
			b.WriteByte('$')
			i += size
		case '(':
			end := strings.IndexByte(next, ')')
			if end < 0 {
				// Not a reference: "$(" is copied and the scan goes on after "(".
				b.WriteString("$(")
				i++
				break
			}
			name := next[1:end]
			if value, ok := lookup(name); ok {
				b.WriteString(value)
			} else {
				b.WriteString("$(" + name + ")")
			}
			i += end + 1
		default:
			b.WriteByte('$')
			b.WriteRune(r)
			i += size
		}
		copied = i + 1
	}
	b.WriteString(s[copied:])
	return b.String()
}

// lookupIn is the lookup of Expand on a set of variables.
func lookupIn(vars map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}
}
