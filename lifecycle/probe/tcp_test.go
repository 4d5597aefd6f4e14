package probe

import (
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestRunTCP(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer func() { _ = l.Close() }()
	open := int32(l.Addr().(*net.TCPAddr).Port)

	closedListener, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := int32(closedListener.Addr().(*net.TCPAddr).Port)
	require.NoError(t, closedListener.Close())

	ports := []corev1.ContainerPort{{Name: "svc", ContainerPort: open}}
	tests := []struct {
		name    string
		action  corev1.TCPSocketAction
		target  Target
		want    Result
		wantMsg string
		wantErr string
	}{
		{"open port", corev1.TCPSocketAction{Port: intstr.FromInt32(open)}, Target{Host: "127.0.0.1"}, Success, "", ""},
		{"named port", corev1.TCPSocketAction{Port: intstr.FromString("svc")}, Target{Host: "127.0.0.1", Ports: ports}, Success, "", ""},
		{"the probe's host", corev1.TCPSocketAction{Host: "127.0.0.1", Port: intstr.FromInt32(open)}, Target{Host: "192.0.2.1"}, Success, "", ""},
		{"closed port", corev1.TCPSocketAction{Port: intstr.FromInt32(closed)}, Target{Host: "127.0.0.1"}, Failure, "connection refused", ""},
		{"undeclared name", corev1.TCPSocketAction{Port: intstr.FromString("db")}, Target{Host: "127.0.0.1", Ports: ports}, Unknown, "", "port db not found"},
		{"no host", corev1.TCPSocketAction{Port: intstr.FromInt32(open)}, Target{}, Unknown, "", ErrNoHost.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &tt.action}}
			got, msg, err := Run(t.Context(), p, tt.target)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tt.want, got)
			assert.Contains(t, msg, tt.wantMsg)
		})
	}
}
