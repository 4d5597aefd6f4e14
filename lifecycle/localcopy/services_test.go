package localcopy

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// fakeServices is the agent's Service watch.
type fakeServices struct {
	synced bool
	list   []*corev1.Service
}

func (f *fakeServices) List() ([]*corev1.Service, error) { return f.list, nil }
func (f *fakeServices) HasSynced() bool                  { return f.synced }

func service(ns, name, ip string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": name}},
		Spec: corev1.ServiceSpec{ClusterIP: ip, Ports: []corev1.ServicePort{{Port: 80}}}}
}

// The Services of a pod's environment are kept at each List of a synced watch; an agent whose
// watch has not listed them (started during an outage) uses the pod's copy.
func TestServicesKeptForThePodsEnvironment(t *testing.T) {
	ctx := context.Background()
	watch := &fakeServices{synced: true, list: []*corev1.Service{
		service("shop", "web", "10.0.0.10"), service("other", "db", "10.0.0.11"),
		service("default", "kubernetes", "10.0.0.1"), service("default", "dns", "10.0.0.12"),
	}}
	dir := t.TempDir()
	s := New(Config{PodsDir: dir, Services: watch})
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "uid-1"}}
	noLinks := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "nolinks", UID: "uid-2"},
		Spec: corev1.PodSpec{EnableServiceLinks: ptr.To(false)}}
	fresh := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "fresh", UID: "uid-3"}}
	for _, p := range []*corev1.Pod{pod, noLinks, fresh} {
		require.NoError(t, os.Mkdir(filepath.Join(dir, string(p.UID)), 0o750))
	}
	for _, p := range []*corev1.Pod{pod, noLinks} {
		list, err := s.Services(ctx, p).List()
		require.NoError(t, err)
		assert.Len(t, list, 4, "the watch's Services, all of them")
	}

	// The agent starts again while the API server cannot be reached.
	watch.synced, watch.list = false, nil
	names := func(p *corev1.Pod) []string {
		svcs := s.Services(ctx, p)
		require.True(t, svcs.HasSynced(), "a pod with a copy has its Services")
		list, err := svcs.List()
		require.NoError(t, err)
		var out []string
		for _, svc := range list {
			out = append(out, svc.Namespace+"/"+svc.Name+" "+svc.Spec.ClusterIP)
			assert.Empty(t, svc.Labels, "kept without what no variable comes from")
		}
		return out
	}
	assert.Equal(t, []string{"default/kubernetes 10.0.0.1", "shop/web 10.0.0.10"}, names(pod))
	assert.Equal(t, []string{"default/kubernetes 10.0.0.1"}, names(noLinks), "without service links, the master service only")
	assert.False(t, s.Services(ctx, fresh).HasSynced(), "no copy: the pod waits for the watch, as the kubelet's")
	list, err := s.Services(ctx, fresh).List()
	require.NoError(t, err)
	assert.Empty(t, list)

	// Once the watch has listed them, it is the truth again.
	watch.synced, watch.list = true, []*corev1.Service{service("shop", "web", "10.0.0.20")}
	list, err = s.Services(ctx, pod).List()
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, "10.0.0.20", list[0].Spec.ClusterIP)
	watch.synced = false
	assert.Equal(t, []string{"shop/web 10.0.0.20"}, names(pod), "the copy follows the watch")
}
