package env

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestExpand(t *testing.T) {
	vars := map[string]string{
		"A":     "a",
		"B":     "b",
		"EMPTY": "",
		"REF":   "$(A)",
		"":      "never",
	}
	delete(vars, "") // a name is never empty; "$()" must stay as written
	tests := []struct {
		in, want string
	}{
		{"", ""},
		{"plain", "plain"},
		{"$(A)", "a"},
		{"___$(B)___", "___b___"},
		{"$(A)-$(A)", "a-a"},
		{"$(A)$(B)", "ab"},
		{"$(EMPTY)", ""},
		{"$(REF)", "$(A)"}, // one level only
		{"$(UNKNOWN)", "$(UNKNOWN)"},
		{"x$(UNKNOWN)y$(A)", "x$(UNKNOWN)ya"},
		{"$$(A)", "$(A)"},
		{"$$$(A)", "$a"},
		{"$$$$(A)", "$$(A)"},
		{"$$", "$"},
		{"$$$", "$$"},
		{"a$$b", "a$b"},
		{"$", "$"},
		{"a$", "a$"},
		{"$(A)$", "a$"},
		{"$A", "$A"},
		{"$é", "$é"},
		{"$(", "$("},
		{"$(A", "$(A"},
		{"$($(A)", "$($(A)"}, // the name is "$(A"
		{"$(x$(A)", "$(x$(A)"},
		{"$()", "$()"},
		{"$((A))", "$((A))"},
		{"$(A))", "a)"},
		{"(A)", "(A)"},
		{"\xff$\xff", "\xff$\uFFFD"}, // the kubelet's quirk
		{"$\xff(A)", "$\uFFFD(A)"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			assert.Equal(t, tt.want, Expand(tt.in, lookupIn(vars)))
		})
	}
}

// escape makes s a literal for Expand, as a user writes $$ for $.
func escape(s string) string { return strings.ReplaceAll(s, "$", "$$") }

func FuzzExpand(f *testing.F) {
	for _, seed := range []string{"", "$", "$$", "$(A)", "$$(A)", "$(A", "$(", "a$(B)c$", "$\xff", "$()", "$(A)$(UNKNOWN)$$$"} {
		f.Add(seed)
	}
	vars := map[string]string{"A": "a$(B)", "B": "$$", "": "empty"}
	f.Fuzz(func(t *testing.T, s string) {
		got := Expand(s, lookupIn(vars))

		// $$ round-trips: any text, escaped, expands back to itself whatever the variables.
		if back := Expand(escape(s), lookupIn(vars)); back != s {
			t.Fatalf("Expand(escape(%q)) = %q", s, back)
		}
		// With no variable known, valid text without $$ is left as it is.
		if utf8.ValidString(s) && !strings.Contains(s, "$$") {
			if same := Expand(s, lookupIn(nil)); same != s {
				t.Fatalf("Expand(%q) with no variables = %q", s, same)
			}
		}
		// Text without $ is never touched.
		if !strings.Contains(s, "$") && got != s {
			t.Fatalf("Expand(%q) = %q", s, got)
		}
	})
}
