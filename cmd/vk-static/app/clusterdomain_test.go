package app

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestClusterDomainFlag(t *testing.T) {
	o, err := parse(t, "--cluster-domain", "cluster.local")
	require.NoError(t, err)
	assert.Equal(t, "cluster.local", o.ClusterDomain)

	_, err = parse(t, "--cluster-domain", "Not_A.Domain")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--cluster-domain")
	assert.Contains(t, err.Error(), "is not a DNS domain")
}
