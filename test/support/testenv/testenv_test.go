package testenv_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/test/support/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, &env)) }

// TestProductionRules proves the control plane enforces what a production cluster does: a
// node identity may create a mirror pod bound to itself and owned by its Node, and nothing
// else.
func TestProductionRules(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	for _, tc := range []struct{ name, identity string }{
		{"token identity", "node-a"},
		{"client-certificate identity", "node-cert"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := env.NodeClient(t, tc.identity)
			node, err := client.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: tc.identity}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("node %s creating its own Node: %v", tc.identity, err)
			}
			t.Cleanup(func() { _ = env.Admin.CoreV1().Nodes().Delete(ctx, node.Name, metav1.DeleteOptions{}) })

			mirror := func(name, nodeName string, owners ...metav1.OwnerReference) *corev1.Pod {
				return &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{
						Name: name, Namespace: ns,
						Annotations:     map[string]string{"kubernetes.io/config.mirror": "hash-1"},
						OwnerReferences: owners,
					},
					Spec: corev1.PodSpec{
						NodeName:   nodeName,
						Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
					},
				}
			}
			owner := metav1.OwnerReference{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID, Controller: ptr.To(true)}

			// NodeRestriction looks the Node up in its informer cache, which may not have the
			// Node yet ("node ... not found"): a kubelet retries, and so does this.
			require.EventuallyWithT(t, func(c *assert.CollectT) {
				_, err = client.CoreV1().Pods(ns).Create(ctx, mirror("ok-"+tc.identity, node.Name, owner), metav1.CreateOptions{})
				if err != nil && strings.Contains(err.Error(), fmt.Sprintf("node %q not found", node.Name)) {
					c.Errorf("%v", err) // try again; any other answer is final
				}
			}, 30*time.Second, 50*time.Millisecond, "NodeRestriction knows node %s", node.Name)
			if err != nil {
				t.Fatalf("mirror pod bound to itself with a Node owner was refused: %v", err)
			}
			refused := []struct {
				what string
				pod  *corev1.Pod
			}{
				{"bound to another node", mirror("other-"+tc.identity, "node-b", owner)},
				{"without an owner reference", mirror("no-owner-"+tc.identity, node.Name)},
				{"owned by another node", mirror("foreign-owner-"+tc.identity, node.Name,
					metav1.OwnerReference{APIVersion: "v1", Kind: "Node", Name: "node-b", UID: "x", Controller: ptr.To(true)})},
				{"not a mirror pod", func() *corev1.Pod {
					p := mirror("plain-"+tc.identity, node.Name, owner)
					p.Annotations = nil
					return p
				}()},
			}
			for _, r := range refused {
				_, err := client.CoreV1().Pods(ns).Create(ctx, r.pod, metav1.CreateOptions{})
				if !apierrors.IsForbidden(err) {
					t.Errorf("pod %s: want Forbidden from NodeRestriction, got %v", r.what, err)
				}
			}
			// Listing pods is allowed only for those bound to the node.
			if _, err := client.CoreV1().Pods("").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
				t.Errorf("cluster-wide pod list as a node: want Forbidden, got %v", err)
			}
			if _, err := client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node.Name}); err != nil {
				t.Errorf("listing own pods: %v", err)
			}
			if _, err := client.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
				t.Errorf("listing secrets as a node: want Forbidden, got %v", err)
			}
		})
	}
}

// TestAdminAndVersion checks the admin client and that the API server reports a version
// kubectl can parse.
func TestAdminAndVersion(t *testing.T) {
	v, err := env.Admin.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(v.GitVersion, "v1.36.") {
		t.Fatalf("server version %q, want v1.36.x", v.GitVersion)
	}
}
