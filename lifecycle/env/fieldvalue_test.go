package env

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func fieldPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:        "web",
			Namespace:   "shop",
			UID:         "1234-uid",
			Labels:      map[string]string{"app": "web", "tier": "front"},
			Annotations: map[string]string{"note": "say \"hi\"\nbye", "Example.com/Key": "upper", "a": "é"},
		},
		Spec: corev1.PodSpec{NodeName: "node-1", ServiceAccountName: "web-sa"},
	}
}

func TestFieldValue(t *testing.T) {
	dual := PodFacts{HostIPs: []string{"10.0.0.1", "fd00::1"}, PodIPs: []string{"10.1.0.5", "fd01::5"}}
	single := PodFacts{HostIP: "10.0.0.2", PodIP: "10.1.0.6"}
	both := PodFacts{HostIP: "ignored", HostIPs: []string{"10.0.0.3"}, PodIP: "ignored", PodIPs: []string{"10.1.0.7"}}
	tests := []struct {
		path  string
		facts PodFacts
		want  string
	}{
		{"metadata.name", dual, "web"},
		{"metadata.namespace", dual, "shop"},
		{"metadata.uid", dual, "1234-uid"},
		{"metadata.labels", dual, "app=\"web\"\ntier=\"front\""},
		{"metadata.annotations", dual, "Example.com/Key=\"upper\"\na=\"é\"\nnote=\"say \\\"hi\\\"\\nbye\""},
		{"metadata.labels['app']", dual, "web"},
		{"metadata.labels['missing']", dual, ""},
		{"metadata.annotations['note']", dual, "say \"hi\"\nbye"},
		{"metadata.annotations['Example.com/Key']", dual, "upper"},
		{"spec.nodeName", dual, "node-1"},
		{"spec.host", dual, "node-1"},
		{"spec.serviceAccountName", dual, "web-sa"},
		{"status.hostIP", dual, "10.0.0.1"},
		{"status.hostIPs", dual, "10.0.0.1,fd00::1"},
		{"status.podIP", dual, "10.1.0.5"},
		{"status.podIPs", dual, "10.1.0.5,fd01::5"},
		{"status.hostIP", single, "10.0.0.2"},
		{"status.hostIPs", single, "10.0.0.2"},
		{"status.podIP", single, "10.1.0.6"},
		{"status.podIPs", single, "10.1.0.6"},
		{"status.hostIP", both, "10.0.0.3"},
		{"status.podIP", both, "10.1.0.7"},
		{"status.podIP", PodFacts{HostIP: "10.0.0.1"}, ""},
		{"status.podIPs", PodFacts{HostIP: "10.0.0.1"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			got, err := FieldValue(fieldPod(), tt.path, tt.facts)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestFieldValueEmptyMaps(t *testing.T) {
	pod := &corev1.Pod{}
	for _, path := range []string{"metadata.labels", "metadata.annotations"} {
		got, err := FieldValue(pod, path, PodFacts{})
		require.NoError(t, err)
		assert.Empty(t, got, path)
	}
}

func TestFieldValueErrors(t *testing.T) {
	tests := []struct {
		path    string
		facts   PodFacts
		wantErr error
	}{
		{"spec.restartPolicy", PodFacts{}, ErrUnsupportedFieldPath},
		{"status.phase", PodFacts{}, ErrUnsupportedFieldPath},
		{"metadata.generateName", PodFacts{}, ErrUnsupportedFieldPath},
		{"metadata.name['x']", PodFacts{}, ErrUnsupportedFieldPath},
		{"", PodFacts{}, ErrUnsupportedFieldPath},
		{"status.hostIP", PodFacts{PodIP: "10.1.0.1"}, ErrHostIPUnknown},
		{"status.hostIPs", PodFacts{}, ErrHostIPUnknown},
		{"metadata.labels['bad key!']", PodFacts{}, nil},
		{"metadata.annotations['']", PodFacts{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			_, err := FieldValue(fieldPod(), tt.path, tt.facts)
			require.Error(t, err)
			if tt.wantErr != nil {
				assert.ErrorIs(t, err, tt.wantErr)
			}
			if tt.path != "" {
				assert.Contains(t, err.Error(), tt.path, "the error names the path")
			}
		})
	}
}

func TestSplitSubscript(t *testing.T) {
	tests := []struct {
		in        string
		path, key string
		ok        bool
	}{
		{"metadata.annotations['myKey']", "metadata.annotations", "myKey", true},
		{"metadata.annotations['a[b]c']", "metadata.annotations", "a[b]c", true},
		{"metadata.labels['']", "metadata.labels", "", true},
		{"metadata.labels", "metadata.labels", "", false},
		{"['x']", "['x']", "", false},
		{"metadata.labels']", "metadata.labels']", "", false},
	}
	for _, tt := range tests {
		path, key, ok := splitSubscript(tt.in)
		assert.Equal(t, tt.path, path, tt.in)
		assert.Equal(t, tt.key, key, tt.in)
		assert.Equal(t, tt.ok, ok, tt.in)
	}
}
