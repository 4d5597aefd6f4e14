package floor

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"os"
	"path/filepath"
	"strings"

	"github.com/fsnotify/fsnotify"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// mirrorAnnotation marks a mirror pod (the kubelet's kubernetes.io/config.mirror); NodeRestriction
// lets a node create a pod only with it and an owner reference to the node.
const mirrorAnnotation = "kubernetes.io/config.mirror"

// staticSource is the least a node agent can do for static pods: each manifest file that
// appears in the directory is read once and becomes one mirror pod (the informer then patches
// it Running like any pod); a file that goes becomes one DELETE of its mirror. No edits, no
// re-reads, no retries, no local "container": the floor runs nothing.
type staticSource struct {
	dir     string
	node    *corev1.Node
	watcher *fsnotify.Watcher
	mirrors map[string]types.NamespacedName // by file name: the mirror created for it
}

// newStaticSource watches dir; run reads what is there and then follows the watch.
func newStaticSource(dir string, node *corev1.Node) (*staticSource, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", dir, err)
	}
	if err := w.Add(dir); err != nil {
		w.Close()
		return nil, fmt.Errorf("watch %s: %w", dir, err)
	}
	return &staticSource{dir: dir, node: node, watcher: w, mirrors: map[string]types.NamespacedName{}}, nil
}

func (s *staticSource) close() { _ = s.watcher.Close() }

// run sends a job per manifest added or removed until ctx is cancelled.
func (s *staticSource) run(ctx context.Context, jobs chan<- job) {
	log := klog.FromContext(ctx)
	send := func(j job) {
		select {
		case jobs <- j:
		case <-ctx.Done():
		}
	}
	added := func(name string) {
		if _, ok := s.mirrors[name]; ok || strings.HasPrefix(name, ".") {
			return
		}
		data, err := os.ReadFile(filepath.Join(s.dir, name))
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				log.Error(err, "read manifest", "file", name)
			}
			return
		}
		mirror, err := mirrorPod(data, s.node)
		if err != nil {
			log.Error(err, "manifest", "file", name)
			return
		}
		s.mirrors[name] = types.NamespacedName{Namespace: mirror.Namespace, Name: mirror.Name}
		send(job{pod: mirror, kind: createMirror})
	}
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		log.Error(err, "read manifest directory", "dir", s.dir)
	}
	for _, e := range entries {
		added(e.Name())
	}
	for {
		select {
		case <-ctx.Done():
			return
		case err, ok := <-s.watcher.Errors:
			if !ok {
				return
			}
			log.Error(err, "manifest directory watch")
		case ev, ok := <-s.watcher.Events:
			if !ok {
				return
			}
			name := filepath.Base(ev.Name)
			switch {
			case ev.Has(fsnotify.Create):
				added(name)
			case ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename):
				if m, ok := s.mirrors[name]; ok {
					delete(s.mirrors, name)
					send(job{pod: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: m.Namespace, Name: m.Name}}, kind: deletePod})
				}
			}
		}
	}
}

// mirrorPod decodes a static pod manifest and returns its mirror on node: named
// <name>-<node> as the kubelet names it, the mirror annotation set to a hash of the manifest,
// owned by the Node.
func mirrorPod(manifest []byte, node *corev1.Node) (*corev1.Pod, error) {
	var static corev1.Pod
	if err := yaml.Unmarshal(manifest, &static); err != nil {
		return nil, fmt.Errorf("decode manifest: %w", err)
	}
	if static.Name == "" {
		return nil, errors.New("manifest has no metadata.name")
	}
	ns := static.Namespace
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	h := fnv.New64a()
	_, _ = h.Write(manifest)
	annotations := maps.Clone(static.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[mirrorAnnotation] = fmt.Sprintf("%x", h.Sum64())
	spec := static.Spec
	spec.NodeName = node.Name
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: static.Name + "-" + node.Name, Namespace: ns,
			Labels: static.Labels, Annotations: annotations,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID, Controller: ptr.To(true),
			}},
		},
		Spec: spec,
	}, nil
}
