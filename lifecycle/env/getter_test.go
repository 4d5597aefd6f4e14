package env

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestClientGetter(t *testing.T) {
	ctx := context.Background()
	client := fake.NewClientset(
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "cfg"}, Data: map[string]string{"k": "v"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "db"}, Data: map[string][]byte{"password": []byte("s3cret")}},
	)
	g := NewClientGetter(client)

	cm, err := g.GetConfigMap(ctx, "shop", "cfg")
	require.NoError(t, err)
	assert.Equal(t, "v", cm.Data["k"])
	s, err := g.GetSecret(ctx, "shop", "db")
	require.NoError(t, err)
	assert.Equal(t, []byte("s3cret"), s.Data["password"])

	_, err = g.GetConfigMap(ctx, "other", "cfg")
	assert.True(t, apierrors.IsNotFound(err), "config map in another namespace: %v", err)
	_, err = g.GetSecret(ctx, "shop", "nope")
	assert.True(t, apierrors.IsNotFound(err), "missing secret: %v", err)
}

// TestBuildThroughClientGetter runs Build on the fake clientset end to end: the NotFound the
// API answers must still make an optional reference skip and a required one fail.
func TestBuildThroughClientGetter(t *testing.T) {
	ctx := context.Background()
	client := fake.NewClientset(
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "db"}, Data: map[string][]byte{"password": []byte("s3cret")}},
	)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}}
	optional := true
	c := &corev1.Container{Name: "app", Env: []corev1.EnvVar{
		{Name: "DB_PASS", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "db"}, Key: "password"}}},
		{Name: "FLAG", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "flags"}, Key: "f", Optional: &optional}}},
	}}
	res, err := Build(ctx, pod, c, PodFacts{}, NewClientGetter(client))
	require.NoError(t, err)
	assert.Equal(t, []EnvVar{{Name: "DB_PASS", Value: "s3cret"}}, res.Env)

	c.Env[1].ValueFrom.ConfigMapKeyRef.Optional = nil
	_, err = Build(ctx, pod, c, PodFacts{}, NewClientGetter(client))
	require.Error(t, err)
	assert.True(t, apierrors.IsNotFound(err), "%v", err)
	assert.Equal(t, `container "app": env "FLAG": configMap "flags" not found`, err.Error())
}
