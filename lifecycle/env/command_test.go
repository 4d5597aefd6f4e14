package env

import (
	"testing"

	"github.com/stretchr/testify/assert"
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
			command, args := Command(c, env)
			assert.Equal(t, tt.want, append(command, args...))
		})
	}
}

func TestCommandKeepsArgsApart(t *testing.T) {
	// Without a command, args go to the image's entrypoint: they must not become the command.
	command, args := Command(&corev1.Container{Name: "app", Args: []string{"--who=$(WHO)"}}, []EnvVar{{Name: "WHO", Value: "me"}})
	assert.Nil(t, command)
	assert.Equal(t, []string{"--who=me"}, args)
}

func TestCommandDoesNotAliasContainer(t *testing.T) {
	c := &corev1.Container{Command: []string{"/bin/echo", "$(A)"}, Args: []string{"x"}}
	got, _ := Command(c, []EnvVar{{Name: "A", Value: "a"}})
	got[0] = "changed"
	assert.Equal(t, []string{"/bin/echo", "$(A)"}, c.Command)
}
