package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/podutil"
	"github.com/vk-static/vk-static/test/support/podwait"
)

// testdata holds the repository's test manifests, good and bad (see its README.md).
const testdata = "../../testdata/manifests"

func manifest(name, image string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
  labels: {app: %s}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: %s
`, name, name, image)
}

// runningMirror waits for the mirror of static pod name to be Running with the given image
// and returns it.
func (a *agent) runningMirror(name, image string) *corev1.Pod {
	a.t.Helper()
	return a.waitMirror(name, 10*time.Second, "Running with "+image, func(p *corev1.Pod) error {
		switch {
		case p.DeletionTimestamp != nil:
			return fmt.Errorf("mirror is being deleted")
		case p.Spec.Containers[0].Image != image:
			return fmt.Errorf("image %s", p.Spec.Containers[0].Image)
		case p.Status.Phase != corev1.PodRunning:
			return fmt.Errorf("phase %q", p.Status.Phase)
		}
		return nil
	})
}

// mirrorGone waits until the mirror of static pod name is gone.
func (a *agent) mirrorGone(name string) {
	a.t.Helper()
	podwait.Gone(a.t, env.Admin, metav1.NamespaceDefault, a.MirrorName(name), 15*time.Second)
}

func TestStaticPodGetsAMirror(t *testing.T) {
	a := startAgent(t, agentOptions{})
	start := time.Now()
	a.WriteManifest("web.yaml", manifest("web", "nginx:1"))
	mirror := a.runningMirror("web", "nginx:1")
	t.Logf("manifest written → mirror Running: %s", time.Since(start))

	if mirror.Annotations[podutil.ConfigMirrorAnnotationKey] != mirror.Annotations[podutil.ConfigHashAnnotationKey] || mirror.Annotations[podutil.ConfigMirrorAnnotationKey] == "" {
		t.Errorf("config.mirror %q != config.hash %q", mirror.Annotations[podutil.ConfigMirrorAnnotationKey], mirror.Annotations[podutil.ConfigHashAnnotationKey])
	}
	if got := mirror.Annotations[podutil.ConfigSourceAnnotationKey]; got != podutil.FileSource {
		t.Errorf("config.source = %q, want file", got)
	}
	node, err := env.Admin.CoreV1().Nodes().Get(context.Background(), a.Node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := metav1.OwnerReference{APIVersion: "v1", Kind: "Node", Name: a.Node, UID: node.UID, Controller: ptr.To(true)}
	if len(mirror.OwnerReferences) != 1 || mirror.OwnerReferences[0].UID != want.UID || !ptr.Deref(mirror.OwnerReferences[0].Controller, false) {
		t.Errorf("owner references %+v, want exactly %+v", mirror.OwnerReferences, want)
	}
	for _, typ := range []corev1.PodConditionType{corev1.PodScheduled, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
		if !hasCondition(mirror, typ) {
			t.Errorf("mirror lacks condition %s=True: %+v", typ, mirror.Status.Conditions)
		}
	}
	// kubectl describe of a mirror pod looks for events under the static pod's UID (the
	// mirror's config.mirror), as the kubelet records them.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		evs, err := env.Admin.CoreV1().Events("default").List(context.Background(), metav1.ListOptions{
			FieldSelector: "involvedObject.name=" + mirror.Name + ",involvedObject.uid=" + mirror.Annotations[podutil.ConfigMirrorAnnotationKey] + ",reason=Started"})
		require.NoError(c, err)
		if len(evs.Items) == 0 {
			c.Errorf("none")
		}
	}, 10*time.Second, 50*time.Millisecond, "Started event for kubectl describe of the mirror")
}

func hasCondition(p *corev1.Pod, typ corev1.PodConditionType) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == typ && c.Status == corev1.ConditionTrue && !c.LastTransitionTime.IsZero() {
			return true
		}
	}
	return false
}

func TestDeletedMirrorIsRecreatedWithoutRestartingThePod(t *testing.T) {
	a := startAgent(t, agentOptions{})
	a.WriteManifest("web.yaml", manifest("web", "nginx:1"))
	first := a.runningMirror("web", "nginx:1")
	ctx := context.Background()
	pods := env.Admin.CoreV1().Pods("default")

	for _, tc := range []struct {
		name string
		opts metav1.DeleteOptions
	}{
		{"graceful", metav1.DeleteOptions{}},
		{"force", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}},
	} {
		if err := pods.Delete(ctx, first.Name, tc.opts); err != nil {
			t.Fatalf("%s delete: %v", tc.name, err)
		}
		var next *corev1.Pod
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			p, err := pods.Get(ctx, first.Name, metav1.GetOptions{})
			require.NoError(c, err)
			if p.UID == first.UID || p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
				c.Errorf("uid %s deleting=%v phase=%s", p.UID, p.DeletionTimestamp != nil, p.Status.Phase)
				return
			}
			next = p
		}, 10*time.Second, 50*time.Millisecond, tc.name+": mirror recreated")
		first = next
	}
	if n := a.metric(t, "vk_static_provider_call_duration_seconds_count", `call="CreatePod"`); n != 1 {
		t.Errorf("provider CreatePod calls = %v, want 1 (the pod must not restart)", n)
	}
	if n := a.metric(t, "vk_static_provider_call_duration_seconds_count", `call="DeletePod"`); n != 0 {
		t.Errorf("provider DeletePod calls = %v, want 0", n)
	}
}

func TestEditedManifestReplacesThePod(t *testing.T) {
	a := startAgent(t, agentOptions{})
	a.WriteManifest("web.yaml", manifest("web", "nginx:1"))
	old := a.runningMirror("web", "nginx:1")

	a.WriteManifest("web.yaml", manifest("web", "nginx:2"))
	edited := a.runningMirror("web", "nginx:2")
	if edited.UID == old.UID || edited.Annotations[podutil.ConfigHashAnnotationKey] == old.Annotations[podutil.ConfigHashAnnotationKey] {
		t.Fatalf("edit kept the old mirror/hash")
	}

	// Many rapid edits coalesce: the last one runs and nothing leaks.
	for i := 3; i <= 52; i++ {
		a.WriteManifest("web.yaml", manifest("web", fmt.Sprintf("nginx:%d", i)))
		time.Sleep(100 * time.Millisecond) // the spacing under test, not a wait for a result
	}
	a.runningMirror("web", "nginx:52")
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		if n := a.metric(c, "vk_static_provider_pods"); n != 1 {
			c.Errorf("provider runs %v pods", n)
			return
		}
		creates := a.metric(c, "vk_static_provider_call_duration_seconds_count", `call="CreatePod"`)
		deletes := a.metric(c, "vk_static_provider_call_duration_seconds_count", `call="DeletePod"`)
		if creates-deletes != 1 {
			c.Errorf("CreatePod %v - DeletePod %v != 1", creates, deletes)
		}
	}, 10*time.Second, 50*time.Millisecond, "one provider pod")
	list, err := env.Admin.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{FieldSelector: "spec.nodeName=" + a.Node})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 {
		t.Errorf("%d pods bound to the node, want 1 mirror", len(list.Items))
	}
}

func TestRemovedManifestStopsThePodThenItsMirror(t *testing.T) {
	a := startAgent(t, agentOptions{})
	a.WriteManifest("web.yaml", manifest("web", "nginx:1"))
	a.runningMirror("web", "nginx:1")
	a.RemoveManifest("web.yaml")
	a.mirrorGone("web")
	if n := a.metric(t, "vk_static_provider_pods"); n != 0 {
		t.Errorf("provider still runs %v pods after the mirror went", n)
	}
	if n := a.metric(t, "vk_static_provider_call_duration_seconds_count", `call="DeletePod"`); n != 1 {
		t.Errorf("DeletePod calls = %v, want 1", n)
	}
}

func TestBadManifestsAreReportedOnTheNode(t *testing.T) {
	a := startAgent(t, agentOptions{})
	a.WriteManifest("web.yaml", manifest("web", "nginx:1"))
	good := a.runningMirror("web", "nginx:1")

	entries, err := os.ReadDir(filepath.Join(testdata, "bad"))
	if err != nil || len(entries) == 0 {
		t.Fatalf("no bad manifests in %s: %v", testdata, err)
	}
	// Every file goes into the directory: the bad ones must each be reported, the dotfile and
	// editor leftovers (valid pods named must-not-appear) must be ignored.
	var reported []string
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(testdata, "bad", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(a.ManifestDir, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(e.Name(), ".") && strings.HasSuffix(e.Name(), ".yaml") {
			reported = append(reported, e.Name())
		}
	}
	for _, name := range reported {
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			evs, err := env.Admin.CoreV1().Events("default").List(context.Background(), metav1.ListOptions{
				FieldSelector: "involvedObject.kind=Node,involvedObject.name=" + a.Node + ",reason=FailedManifest"})
			require.NoError(c, err)
			for _, e := range evs.Items {
				if strings.Contains(e.Message, name) {
					return
				}
			}
			c.Errorf("no FailedManifest event names %s among %d", name, len(evs.Items))
		}, 10*time.Second, 50*time.Millisecond, "event naming "+name)
	}
	if _, err := env.Admin.CoreV1().Pods("default").Get(context.Background(), "must-not-appear-"+a.Node, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a dotfile or editor leftover was read: %v", err)
	}
	now := a.runningMirror("web", "nginx:1")
	if now.UID != good.UID {
		t.Errorf("the good pod's mirror was replaced")
	}
	if n := a.metric(t, "vk_static_provider_call_duration_seconds_count", `call="CreatePod"`); n != 1 {
		t.Errorf("CreatePod calls = %v, want 1: bad manifests must not start or restart pods", n)
	}
}

func TestStandaloneRunsStaticPods(t *testing.T) {
	a := startAgent(t, agentOptions{standalone: true})
	a.WriteManifest("web.yaml", manifest("web", "nginx:1"))
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		if n := a.metric(c, "vk_static_provider_pods"); n != 1 {
			c.Errorf("provider runs %v pods", n)
		}
	}, 10*time.Second, 50*time.Millisecond, "pod running in the provider")
	if _, err := env.Admin.CoreV1().Nodes().Get(context.Background(), a.Node, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("standalone agent registered a Node (or the check failed): %v", err)
	}
}
