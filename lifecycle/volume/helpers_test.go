package volume

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/vk-static/vk-static/kubeclient/kubeclienttest"
	"github.com/vk-static/vk-static/lifecycle/env"
	"github.com/vk-static/vk-static/nodeobjects"
)

var testNow = time.Date(2026, 11, 23, 7, 0, 0, 0, time.UTC)

type testEnv struct {
	m       *Manager
	podsDir string
	client  *fake.Clientset
	clock   *clocktesting.FakeClock
}

// newTestEnv is a Manager on a temporary PodsDir whose objects come from a fake clientset
// holding objs, through lifecycle/env's getter (real NotFound answers).
func newTestEnv(t *testing.T, cfg Config, objs ...runtime.Object) *testEnv {
	t.Helper()
	client := fake.NewClientset(objs...)
	clk := clocktesting.NewFakeClock(testNow)
	if cfg.PodsDir == "" {
		cfg.PodsDir = filepath.Join(t.TempDir(), "pods")
	}
	cfg.Objects = nodeobjects.NewClientGetter(kubeclienttest.Wrap(client))
	cfg.Clock = clk
	if cfg.HostPathFlag == "" {
		cfg.HostPathFlag = "--process-allowed-host-paths"
	}
	m, err := New(cfg)
	require.NoError(t, err)
	return &testEnv{m: m, podsDir: m.podsDir, client: client, clock: clk}
}

func testPod(volumes ...corev1.Volume) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web", Namespace: "ns", UID: types.UID("uid-1"),
			Labels:      map[string]string{"app": "web", "tier": "front"},
			Annotations: map[string]string{"note": "a \"quoted\" value"},
		},
		Spec: corev1.PodSpec{
			NodeName:   "node-a",
			Volumes:    volumes,
			Containers: []corev1.Container{{Name: "app"}},
		},
	}
}

func configMap(name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Data: data}
}

func secret(name string, data map[string]string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

func ptr[T any](v T) *T { return &v }

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}

// tsDirs lists the ..<ts> data directories of a written volume.
func tsDirs(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		if e.IsDir() && len(e.Name()) > 2 && e.Name()[:2] == ".." {
			out = append(out, e.Name())
		}
	}
	return out
}

func setup(t *testing.T, te *testEnv, pod *corev1.Pod) (Volumes, []string) {
	t.Helper()
	vols, warnings, err := te.m.Setup(context.Background(), pod, env.PodFacts{PodIP: "10.0.0.5"}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = te.m.Teardown(context.Background(), pod.UID) })
	return vols, warnings
}

func typesUID(s string) types.UID { return types.UID(s) }
