package image

import (
	"encoding/base64"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPullPolicy(t *testing.T) {
	tests := []struct {
		image string
		set   corev1.PullPolicy
		want  corev1.PullPolicy
	}{
		{"busybox", "", corev1.PullAlways},
		{"busybox:latest", "", corev1.PullAlways},
		{"busybox:1.36", "", corev1.PullIfNotPresent},
		{"127.0.0.1:5000/app", "", corev1.PullAlways},
		{"127.0.0.1:5000/app:v1", "", corev1.PullIfNotPresent},
		{"registry.example.com/app@sha256:0123", "", corev1.PullIfNotPresent},
		{"busybox", corev1.PullNever, corev1.PullNever},
		{"busybox:1", corev1.PullAlways, corev1.PullAlways},
	}
	for _, tt := range tests {
		got := PullPolicy(&corev1.Container{Image: tt.image, ImagePullPolicy: tt.set})
		assert.Equal(t, tt.want, got, "%s (set %q)", tt.image, tt.set)
	}
}

func dockerConfigJSON(name, auths string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Type: corev1.SecretTypeDockerConfigJson,
		Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":` + auths + `}`)}}
}

func TestKeyringLookup(t *testing.T) {
	auth := base64.StdEncoding.EncodeToString([]byte("bob:s3cret"))
	ring, err := NewKeyring([]*corev1.Secret{
		dockerConfigJSON("a", `{"registry.example.com":{"username":"any","password":"p1"},
			"registry.example.com/team":{"auth":"`+auth+`"},
			"*.corp.example":{"username":"glob","password":"p3"},
			"127.0.0.1:5000":{"username":"local","password":"p4"},
			"https://index.docker.io/v1/":{"username":"hub","password":"p5"}}`),
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "old"}, Type: corev1.SecretTypeDockercfg,
			Data: map[string][]byte{corev1.DockerConfigKey: []byte(`{"quay.io":{"username":"q","password":"p6"}}`)}},
	})
	require.NoError(t, err)
	users := func(image string) []string {
		var out []string
		for _, c := range ring.Lookup(image) {
			out = append(out, c.Username)
		}
		return out
	}
	tests := []struct {
		image string
		want  []string
	}{
		{"registry.example.com/team/app:v1", []string{"bob", "any"}},
		{"registry.example.com/teamster/app", []string{"any"}},
		{"registry.example.com/other", []string{"any"}},
		{"eu.corp.example/app", []string{"glob"}},
		{"a.eu.corp.example/app", nil},
		{"127.0.0.1:5000/app:v1", []string{"local"}},
		{"127.0.0.1:5001/app", nil},
		{"127.0.0.1/app", nil},
		{"busybox", []string{"hub"}},
		{"library/busybox:1", []string{"hub"}},
		{"docker.io/library/busybox", []string{"hub"}},
		{"quay.io/x/y@sha256:00", []string{"q"}},
		{"localhost/app", nil},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, users(tt.image), tt.image)
	}
	assert.Equal(t, "s3cret", ring.Lookup("registry.example.com/team/app")[0].Password, "auth decoded")
	assert.Equal(t, "registry.example.com/team", ring.Lookup("registry.example.com/team/app")[0].Registry)
}

func TestKeyringRefusesWhatItCannotRead(t *testing.T) {
	_, err := NewKeyring([]*corev1.Secret{{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "opaque"}, Type: corev1.SecretTypeOpaque}})
	assert.ErrorContains(t, err, "ns/opaque")
	_, err = NewKeyring([]*corev1.Secret{dockerConfigJSON("bad", `{`)})
	assert.ErrorContains(t, err, "ns/bad")
	var nilRing *Keyring
	assert.Empty(t, nilRing.Lookup("busybox"))
}
