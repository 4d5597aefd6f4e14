package env

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func service(ns, name, ip string, ports ...corev1.ServicePort) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.ServiceSpec{ClusterIP: ip, Ports: ports}}
}

// The kubelet's variables for one service: host, port, named ports, and the link variables of
// every port.
func TestFromServices(t *testing.T) {
	got := FromServices([]*corev1.Service{service("ns", "fooservice-1", "10.0.0.11",
		corev1.ServicePort{Name: "http", Port: 8765, Protocol: corev1.ProtocolTCP},
		corev1.ServicePort{Port: 53, Protocol: corev1.ProtocolUDP})})
	assert.Equal(t, []EnvVar{
		{"FOOSERVICE_1_SERVICE_HOST", "10.0.0.11"},
		{"FOOSERVICE_1_SERVICE_PORT", "8765"},
		{"FOOSERVICE_1_SERVICE_PORT_HTTP", "8765"},
		{"FOOSERVICE_1_PORT", "tcp://10.0.0.11:8765"},
		{"FOOSERVICE_1_PORT_8765_TCP", "tcp://10.0.0.11:8765"},
		{"FOOSERVICE_1_PORT_8765_TCP_PROTO", "tcp"},
		{"FOOSERVICE_1_PORT_8765_TCP_PORT", "8765"},
		{"FOOSERVICE_1_PORT_8765_TCP_ADDR", "10.0.0.11"},
		{"FOOSERVICE_1_PORT_53_UDP", "udp://10.0.0.11:53"},
		{"FOOSERVICE_1_PORT_53_UDP_PROTO", "udp"},
		{"FOOSERVICE_1_PORT_53_UDP_PORT", "53"},
		{"FOOSERVICE_1_PORT_53_UDP_ADDR", "10.0.0.11"},
	}, got)
}

// The pod's namespace's services with enableServiceLinks, the master service always; headless
// services and other namespaces' never.
func TestServiceEnv(t *testing.T) {
	port := corev1.ServicePort{Port: 443, Protocol: corev1.ProtocolTCP}
	services := []*corev1.Service{
		service("default", "kubernetes", "10.0.0.1", port),
		service("default", "other", "10.0.0.2", port),
		service("ns", "web", "10.0.0.3", port),
		service("ns", "headless", corev1.ClusterIPNone, port),
		service("ns", "kubernetes", "10.0.0.4", port),
		service("elsewhere", "db", "10.0.0.5", port),
	}
	withLinks := ServiceEnv(services, "ns", true)
	assert.Equal(t, "10.0.0.4", withLinks["KUBERNETES_SERVICE_HOST"], "a namesake in the pod's namespace wins over the master service, as the kubelet's map")
	assert.Equal(t, "10.0.0.3", withLinks["WEB_SERVICE_HOST"])
	for _, absent := range []string{"OTHER_SERVICE_HOST", "HEADLESS_SERVICE_HOST", "DB_SERVICE_HOST"} {
		assert.NotContains(t, withLinks, absent)
	}
	withoutLinks := ServiceEnv(services, "ns", false)
	assert.Equal(t, "10.0.0.1", withoutLinks["KUBERNETES_SERVICE_HOST"])
	assert.Equal(t, "tcp://10.0.0.1:443", withoutLinks["KUBERNETES_PORT"])
	assert.NotContains(t, withoutLinks, "WEB_SERVICE_HOST")
}

// Service variables come last, never replace the container's own, and $(VAR) sees them.
func TestBuildAddsServiceVariables(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}
	c := &corev1.Container{Name: "app", Env: []corev1.EnvVar{
		{Name: "URL", Value: "https://$(WEB_SERVICE_HOST):$(WEB_SERVICE_PORT)"},
		{Name: "WEB_SERVICE_PORT", Value: "mine"},
	}}
	res, err := Build(context.Background(), pod, c, PodFacts{ServiceEnv: map[string]string{
		"WEB_SERVICE_HOST": "10.0.0.3", "WEB_SERVICE_PORT": "443", "A_SERVICE_HOST": "10.0.0.9",
	}}, nil)
	require.NoError(t, err)
	assert.Equal(t, []EnvVar{
		{"URL", "https://10.0.0.3:443"},
		{"WEB_SERVICE_PORT", "mine"},
		{"A_SERVICE_HOST", "10.0.0.9"},
		{"WEB_SERVICE_HOST", "10.0.0.3"},
	}, res.Env)
}
