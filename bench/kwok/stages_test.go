package kwok

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/yaml"
)

// stage is the part of a KWOK Stage the bench relies on.
type stage struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		ResourceRef struct {
			APIGroup string `json:"apiGroup"`
			Kind     string `json:"kind"`
		} `json:"resourceRef"`
		Next struct {
			Delete         bool   `json:"delete"`
			StatusTemplate string `json:"statusTemplate"`
		} `json:"next"`
	} `json:"spec"`
}

func TestConfigHoldsKWOKsFastStages(t *testing.T) {
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(Config()), 4096)
	got := map[string]stage{}
	for {
		var s stage
		err := dec.Decode(&s)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		require.NotContains(t, got, s.Metadata.Name, "one document per stage")
		got[s.Metadata.Name] = s
	}
	tests := []struct {
		name, kind string
		deletes    bool
	}{
		{"node-initialize", "Node", false},
		{"node-heartbeat-with-lease", "Node", false},
		{"pod-ready", "Pod", false},
		{"pod-complete", "Pod", false},
		{"pod-delete", "Pod", true},
	}
	require.Len(t, got, len(tests))
	for _, tt := range tests {
		s, ok := got[tt.name]
		require.True(t, ok, tt.name)
		assert.Equal(t, "kwok.x-k8s.io/v1alpha1", s.APIVersion, tt.name)
		assert.Equal(t, "Stage", s.Kind, tt.name)
		assert.Equal(t, "v1", s.Spec.ResourceRef.APIGroup, tt.name)
		assert.Equal(t, tt.kind, s.Spec.ResourceRef.Kind, tt.name)
		assert.Equal(t, tt.deletes, s.Spec.Next.Delete, tt.name)
	}
	assert.Contains(t, got["pod-ready"].Spec.Next.StatusTemplate, "phase: Running")
}

func TestArgs(t *testing.T) {
	args := Args("/bin/kwok", Options{Kubeconfig: "/k", Node: "n", ServerAddress: "127.0.0.1:1", ConfigPath: "/c"})
	assert.Equal(t, []string{"/bin/kwok", "--kubeconfig", "/k", "--config", "/c", "--manage-single-node", "n",
		"--node-ip", "127.0.0.1", "--server-address", "127.0.0.1:1"}, args)
}
