package probe

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestResolvePort(t *testing.T) {
	ports := []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}, {Name: "bad", ContainerPort: 70000}}
	tests := []struct {
		name    string
		port    intstr.IntOrString
		want    int
		wantErr string
	}{
		{"number", intstr.FromInt32(80), 80, ""},
		{"name", intstr.FromString("http"), 8080, ""},
		{"number as a string", intstr.FromString("9090"), 9090, ""},
		{"undeclared name", intstr.FromString("metrics"), 0, "port metrics not found"},
		{"zero", intstr.FromInt32(0), 0, "invalid port number: 0"},
		{"declared out of range", intstr.FromString("bad"), 0, "invalid port number: 70000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := resolvePort(tt.port, ports)
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}
