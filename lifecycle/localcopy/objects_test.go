package localcopy

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Every read asks the API server; its answer replaces the copy, which answers only while the
// API server cannot be reached.
func TestObjectsKeptAndUsedOnlyWhenUnreachable(t *testing.T) {
	ctx := context.Background()
	api := &fakeAPI{configMaps: map[string]*corev1.ConfigMap{"shop/cfg": configMap("shop", "cfg", "hello")}}
	s, pod, _ := newStore(t, api)
	objects := s.Objects(pod)

	cm, err := objects.GetConfigMap(ctx, "shop", "cfg")
	require.NoError(t, err)
	assert.Equal(t, "hello", cm.Data["k"])

	api.err = refused
	cm, err = objects.GetConfigMap(ctx, "shop", "cfg")
	require.NoError(t, err, "the copy answers while the API server cannot be reached")
	assert.Equal(t, "hello", cm.Data["k"])
	assert.Empty(t, cm.ManagedFields, "kept without managed fields")

	api.err = nil
	api.configMaps["shop/cfg"] = configMap("shop", "cfg", "bye")
	cm, err = objects.GetConfigMap(ctx, "shop", "cfg")
	require.NoError(t, err)
	assert.Equal(t, "bye", cm.Data["k"], "the API server's answer, not the copy")
	api.err = refused
	cm, err = objects.GetConfigMap(ctx, "shop", "cfg")
	require.NoError(t, err)
	assert.Equal(t, "bye", cm.Data["k"], "the answer replaced the copy")
	assert.Equal(t, 4, api.calls, "every read asks the API server first")

	_, err = objects.GetConfigMap(ctx, "shop", "never-read")
	assert.ErrorIs(t, err, syscall.ECONNREFUSED, "nothing kept: the API server's error")
}

// An answer is the API server's word: a 404 (gone) removes the copy and is returned, as the
// kubelet treats a missing object; a 403 is returned and the copy is not used; answers that say
// it cannot answer now (429, 5xx) are an outage.
func TestObjectsAnswersAreNotOutages(t *testing.T) {
	ctx := context.Background()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "db"}, Data: map[string][]byte{"password": []byte("s3cret")}}
	api := &fakeAPI{secrets: map[string]*corev1.Secret{"shop/db": secret}}
	s, pod, _ := newStore(t, api)
	objects := s.Objects(pod)
	read := func() (string, error) {
		got, err := objects.GetSecret(ctx, "shop", "db")
		if err != nil {
			return "", err
		}
		return string(got.Data["password"]), nil
	}
	_, err := read()
	require.NoError(t, err)

	gr := schema.GroupResource{Resource: "secrets"}
	for _, outage := range []error{
		apierrors.NewServiceUnavailable("down"), apierrors.NewInternalError(errors.New("etcd")),
		apierrors.NewTooManyRequests("later", 1), apierrors.NewServerTimeout(gr, "get", 1),
		apierrors.NewTimeoutError("slow", 1), context.DeadlineExceeded,
	} {
		api.err = outage
		got, err := read()
		if assert.NoError(t, err, "%v", outage) {
			assert.Equal(t, "s3cret", got)
		}
	}

	api.err = apierrors.NewForbidden(gr, "db", errors.New("no relationship found between node and this object"))
	_, err = read()
	assert.True(t, apierrors.IsForbidden(err), "a 403 is the answer: %v", err)
	api.err = refused
	_, err = read()
	require.NoError(t, err, "a 403 leaves the copy")

	api.err = nil
	delete(api.secrets, "shop/db")
	_, err = read()
	assert.True(t, apierrors.IsNotFound(err), "a 404 is the answer: %v", err)
	api.err = refused
	_, err = read()
	assert.ErrorIs(t, err, syscall.ECONNREFUSED, "a 404 removed the copy: a deleted object never comes back")

	ctx, cancel := context.WithCancel(ctx)
	cancel()
	api.err = context.Canceled
	_, err = objects.GetSecret(ctx, "shop", "db")
	assert.ErrorIs(t, err, context.Canceled)
}

// The copy is the pod's, root-only, and never outlives the pod's directory.
func TestObjectsCopyIsThePodsAndPrivate(t *testing.T) {
	ctx := context.Background()
	api := &fakeAPI{
		configMaps: map[string]*corev1.ConfigMap{"shop/cfg": configMap("shop", "cfg", "hello"), "other/cfg": configMap("other", "cfg", "x")},
		secrets:    map[string]*corev1.Secret{"shop/db": {ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "db"}, Data: map[string][]byte{"p": []byte("s")}}},
	}
	s, pod, _ := newStore(t, api)
	objects := s.Objects(pod)
	_, err := objects.GetConfigMap(ctx, "shop", "cfg")
	require.NoError(t, err)
	_, err = objects.GetSecret(ctx, "shop", "db")
	require.NoError(t, err)
	_, err = objects.GetConfigMap(ctx, "other", "cfg")
	require.NoError(t, err)

	dir := s.Dir(pod.UID)
	fi, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.ModeDir|0o700, fi.Mode(), "the copy's directory")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
		info, err := e.Info()
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), info.Mode(), e.Name())
	}
	assert.Equal(t, []string{"configmap-cfg.json", "secret-db.json"}, names, "another namespace's object is never kept")

	// An unchanged answer is not written again.
	before, err := os.Stat(filepath.Join(dir, "configmap-cfg.json"))
	require.NoError(t, err)
	_, err = objects.GetConfigMap(ctx, "shop", "cfg")
	require.NoError(t, err)
	after, err := os.Stat(filepath.Join(dir, "configmap-cfg.json"))
	require.NoError(t, err)
	assert.True(t, os.SameFile(before, after), "rewritten although unchanged")

	// The pod is forgotten: its directory goes, and nothing of it is written again.
	require.NoError(t, os.RemoveAll(filepath.Dir(dir)))
	_, err = objects.GetConfigMap(ctx, "shop", "cfg")
	require.NoError(t, err)
	assert.NoDirExists(t, filepath.Dir(dir))

	other := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "db", UID: "uid-2"}}
	require.NoError(t, os.Mkdir(filepath.Dir(s.Dir(other.UID)), 0o750))
	_, err = s.Objects(other).GetConfigMap(ctx, "shop", "cfg")
	require.NoError(t, err)
	require.NoError(t, s.Forget(other.UID))
	assert.NoDirExists(t, s.Dir(other.UID))

	assert.Nil(t, New(Config{PodsDir: t.TempDir()}).Objects(pod), "no getter, none wrapped")
	assert.Nil(t, New(Config{PodsDir: t.TempDir()}).Tokens())
	assert.Nil(t, New(Config{PodsDir: t.TempDir()}).Services(ctx, pod))
}
