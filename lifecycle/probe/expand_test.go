package probe

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
)

func TestExpandStatic(t *testing.T) {
	env := []corev1.EnvVar{
		{Name: "PORT", Value: "8080"},
		{Name: "EMPTY", Value: ""},
		{Name: "FROM", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
	}
	tests := []struct{ in, want string }{
		{"curl localhost:$(PORT)/", "curl localhost:8080/"},
		{"$(MISSING)", "$(MISSING)"},
		{"a$(EMPTY)b", "ab"},
		{"$(FROM)", ""}, // valueFrom is not resolved: its static Value is empty
		{"$$(PORT)", "$(PORT)"},
		{"$$", "$"},
		{"cost $5", "cost $5"},
		{"$(PORT", "$(PORT"},
		{"end$", "end$"},
		{"$(PORT)$(PORT)", "80808080"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			assert.Equal(t, []string{tt.want}, expandStatic([]string{tt.in}, env))
		})
	}
	assert.Nil(t, expandStatic(nil, env))
}
