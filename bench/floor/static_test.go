package floor

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const manifest = `apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: ns
  labels: {app: web}
  annotations: {a: b}
spec:
  containers:
  - name: c
    image: pause
`

var testNode = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a", UID: "node-uid"}}

func TestMirrorPod(t *testing.T) {
	m, err := mirrorPod([]byte(manifest), testNode)
	require.NoError(t, err)
	assert.Equal(t, "web-node-a", m.Name)
	assert.Equal(t, "ns", m.Namespace)
	assert.Equal(t, "node-a", m.Spec.NodeName)
	assert.Equal(t, "b", m.Annotations["a"])
	assert.NotEmpty(t, m.Annotations[mirrorAnnotation])
	assert.Equal(t, map[string]string{"app": "web"}, m.Labels)
	require.Len(t, m.OwnerReferences, 1)
	assert.Equal(t, "Node", m.OwnerReferences[0].Kind)
	assert.Equal(t, testNode.UID, m.OwnerReferences[0].UID)
	require.Len(t, m.Spec.Containers, 1)

	other, err := mirrorPod([]byte(manifest+"    imagePullPolicy: Never\n"), testNode)
	require.NoError(t, err)
	assert.NotEqual(t, m.Annotations[mirrorAnnotation], other.Annotations[mirrorAnnotation], "the hash follows the manifest")

	_, err = mirrorPod([]byte("kind: Pod\n"), testNode)
	assert.Error(t, err, "no name")
	_, err = mirrorPod([]byte("{"), testNode)
	assert.Error(t, err)
}

// TestStaticSourceOneWritePerFile: a manifest already there and one renamed in later each
// become one mirror create; dot-files are ignored; a removed file becomes one DELETE of its
// mirror.
func TestStaticSourceOneWritePerFile(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "before.yaml"), []byte(manifest), 0o644))
	s, err := newStaticSource(dir, testNode)
	require.NoError(t, err)
	defer s.close()
	ctx, cancel := context.WithCancel(context.Background())
	jobs := make(chan job, 16)
	done := make(chan struct{})
	go func() { defer close(done); s.run(ctx, jobs) }()
	defer func() { cancel(); <-done }()

	next := func() job {
		t.Helper()
		select {
		case j := <-jobs:
			return j
		case <-time.After(10 * time.Second):
			t.Fatal("no job")
			return job{}
		}
	}
	j := next()
	assert.Equal(t, createMirror, j.kind)
	assert.Equal(t, "web-node-a", j.pod.Name)

	tmp := filepath.Join(dir, ".later.yaml.tmp")
	require.NoError(t, os.WriteFile(tmp, []byte(`{"metadata":{"name":"later","namespace":"ns"},"spec":{"containers":[{"name":"c","image":"pause"}]}}`), 0o644))
	require.NoError(t, os.Rename(tmp, filepath.Join(dir, "later.yaml")))
	j = next()
	assert.Equal(t, createMirror, j.kind)
	assert.Equal(t, "later-node-a", j.pod.Name)

	require.NoError(t, os.Remove(filepath.Join(dir, "before.yaml")))
	j = next()
	assert.Equal(t, deletePod, j.kind)
	assert.Equal(t, "web-node-a", j.pod.Name)
	assert.Equal(t, "ns", j.pod.Namespace)
	assert.Empty(t, j.pod.UID)

}
