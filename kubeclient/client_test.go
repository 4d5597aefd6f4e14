package kubeclient

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
)

func TestNewRefusesQPSWithoutBurst(t *testing.T) {
	_, err := New(&rest.Config{Host: "https://127.0.0.1:1", QPS: 5})
	assert.ErrorContains(t, err, "burst")
	c, err := New(&rest.Config{Host: "https://127.0.0.1:1", QPS: 5, Burst: 10})
	require.NoError(t, err)
	_, ok := c.CoreRESTClient().(*rest.RESTClient)
	assert.True(t, ok, "CoreRESTClient is %T", c.CoreRESTClient())
}

func TestSchemeHoldsOnlyTheAgentsGroups(t *testing.T) {
	s := NewScheme()
	gvks, _, err := s.ObjectKinds(&corev1.Pod{})
	require.NoError(t, err)
	assert.Equal(t, "Pod", gvks[0].Kind)
	groups := map[string]bool{}
	for gvk := range s.AllKnownTypes() {
		if gvk.Version != "__internal" { // meta's watch event, in every group
			groups[gvk.Group+"/"+gvk.Version] = true
		}
	}
	assert.Equal(t, map[string]bool{
		"/v1": true, "coordination.k8s.io/v1": true, "authentication.k8s.io/v1": true,
		"authorization.k8s.io/v1": true, "certificates.k8s.io/v1": true, "node.k8s.io/v1": true,
	}, groups)
}
