package testenv

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"
)

// The controllers a test asks for replace the default list, and its extra flags come last
// (the later of a flag given twice wins).
func TestControllerManagerArgs(t *testing.T) {
	ca, err := newAuthority()
	require.NoError(t, err)
	e := &Env{Dir: t.TempDir(), ca: ca, CAFile: "/ca.crt", saKeyFile: "/sa.key", AdminConfig: &rest.Config{Host: "https://127.0.0.1:1"}}

	args, err := e.controllerManagerArgs(ControllerManagerOptions{})
	require.NoError(t, err)
	i := slices.Index(args, "--controllers")
	require.GreaterOrEqual(t, i, 0)
	assert.Equal(t, "csrsigning,csrapproving,csrcleaner,tokencleaner,serviceaccount-token,serviceaccount", args[i+1])

	args, err = e.controllerManagerArgs(ControllerManagerOptions{
		Controllers: []string{"*"},
		ExtraArgs:   []string{"--allocate-node-cidrs", "--cluster-cidr", "10.244.0.0/16"},
	})
	require.NoError(t, err)
	i = slices.Index(args, "--controllers")
	assert.Equal(t, "*", args[i+1])
	assert.Equal(t, []string{"--allocate-node-cidrs", "--cluster-cidr", "10.244.0.0/16"}, args[len(args)-3:])
}
