package env

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

func TestCommand(t *testing.T) {
	env := []EnvVar{{Name: "GREETING", Value: "hello"}, {Name: "WHO", Value: "world"}, {Name: "EMPTY"}}
	tests := []struct {
		name          string
		command, args []string
		want          []string
	}{
		{"command only", []string{"/bin/echo"}, nil, []string{"/bin/echo"}},
		{"command then args", []string{"/bin/sh", "-c"}, []string{"echo $GREETING"}, []string{"/bin/sh", "-c", "echo $GREETING"}},
		{"references expanded", []string{"/bin/echo", "$(GREETING)"}, []string{"$(WHO)!", "$(EMPTY)"}, []string{"/bin/echo", "hello", "world!", ""}},
		{"unknown kept", []string{"/bin/echo"}, []string{"$(NOPE)"}, []string{"/bin/echo", "$(NOPE)"}},
		{"$$ escapes", []string{"/bin/echo"}, []string{"$$(WHO)", "$$$(WHO)", "cost: $$5"}, []string{"/bin/echo", "$(WHO)", "$world", "cost: $5"}},
		{"command itself expanded", []string{"$(GREETING)-bin"}, nil, []string{"hello-bin"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &corev1.Container{Name: "app", Command: tt.command, Args: tt.args}
			got, err := Command(c, env)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestCommandWithoutCommand(t *testing.T) {
	for _, args := range [][]string{nil, {"--flag"}} {
		_, err := Command(&corev1.Container{Name: "app", Args: args}, nil)
		require.ErrorIs(t, err, ErrNoCommand)
		assert.Contains(t, err.Error(), `"app"`)
	}
}

func TestCommandDoesNotAliasContainer(t *testing.T) {
	c := &corev1.Container{Command: []string{"/bin/echo", "$(A)"}, Args: []string{"x"}}
	got, err := Command(c, []EnvVar{{Name: "A", Value: "a"}})
	require.NoError(t, err)
	got[0] = "changed"
	assert.Equal(t, []string{"/bin/echo", "$(A)"}, c.Command)
}
