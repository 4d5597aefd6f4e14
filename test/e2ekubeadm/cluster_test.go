package e2ekubeadm

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/vk-static/vk-static/test/support/agentproc"
	"github.com/vk-static/vk-static/test/support/kubeadmnode"
	"github.com/vk-static/vk-static/test/support/podwait"
)

// components are kubeadm's static pods, each by its manifest's name (<component>.yaml, the pod
// <component>, its mirror <component>-<node>).
var components = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"}

// cluster is the kubeadm control plane under test and the agent that runs it.
type cluster struct {
	node    string
	rt      nodeRuntime
	agent   *agentproc.Agent
	kubeadm kubeadmRunner
	// admin is kubernetes-admin of admin.conf, in kubeadm:cluster-admins: allowed everything
	// once kubeadm's bootstrap-token phase has bound that group.
	admin   kubernetes.Interface
	kubectl string
	home    string // kubectl's HOME (its discovery cache)
}

// mirrorName is the mirror of component's static pod.
func (c *cluster) mirrorName(component string) string { return component + "-" + c.node }

// mirror reads the mirror pod of component.
func (c *cluster) mirror(ctx context.Context, component string) (*corev1.Pod, error) {
	return c.admin.CoreV1().Pods(metav1.NamespaceSystem).Get(ctx, c.mirrorName(component), metav1.GetOptions{})
}

// waitMirror waits until the mirror of component passes check, failing t with the last state
// seen when timeout passes.
func (c *cluster) waitMirror(t *testing.T, component string, timeout time.Duration, what string, check func(*corev1.Pod) error) *corev1.Pod {
	t.Helper()
	start := time.Now()
	p := podwait.Until(t, c.admin, metav1.NamespaceSystem, c.mirrorName(component), timeout, what, check)
	t.Logf("%s: %s (%s)", p.Name, what, time.Since(start).Round(100*time.Millisecond))
	return p
}

// waitNodeReady waits until Node name reports Ready with nodeIP as its InternalIP.
func (c *cluster) waitNodeReady(t *testing.T, name string, timeout time.Duration) *corev1.Node {
	t.Helper()
	var node *corev1.Node
	start := time.Now()
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		n, err := c.admin.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
		require.NoError(ct, err)
		assert.Contains(ct, n.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: nodeIP.String()})
		ready := condition(n.Status.Conditions, corev1.NodeReady)
		require.NotNil(ct, ready, "no Ready condition: %v", n.Status.Conditions)
		assert.Equal(ct, corev1.ConditionTrue, ready.Status, "Ready: %s %s", ready.Reason, ready.Message)
		node = n
	}, timeout, 500*time.Millisecond, "Node %s registered and Ready at %s", name, nodeIP)
	t.Logf("Node %s Ready (%s)", name, time.Since(start).Round(100*time.Millisecond))
	return node
}

func condition(conditions []corev1.NodeCondition, typ corev1.NodeConditionType) *corev1.NodeCondition {
	i := slices.IndexFunc(conditions, func(c corev1.NodeCondition) bool { return c.Type == typ })
	if i < 0 {
		return nil
	}
	return &conditions[i]
}

// runningReady is a check for waitMirror: not being deleted, Running, every container running
// and ready, the pod Ready.
func runningReady(p *corev1.Pod) error {
	if p.DeletionTimestamp != nil {
		return fmt.Errorf("being deleted")
	}
	if p.Status.Phase != corev1.PodRunning {
		return fmt.Errorf("phase %q, containers %s", p.Status.Phase, podwait.Describe(p.Status.ContainerStatuses))
	}
	if len(p.Status.ContainerStatuses) != len(p.Spec.Containers) {
		return fmt.Errorf("%d container statuses for %d containers", len(p.Status.ContainerStatuses), len(p.Spec.Containers))
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Running == nil || !cs.Ready {
			return fmt.Errorf("container %s: ready %v, %s", cs.Name, cs.Ready, podwait.Describe(cs.State))
		}
	}
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
			return nil
		}
	}
	return fmt.Errorf("not Ready: %s", podwait.Describe(p.Status.Conditions))
}

// allRunningReady waits until the mirrors of components are all Running and Ready.
func (c *cluster) allRunningReady(t *testing.T, components []string, timeout time.Duration) map[string]*corev1.Pod {
	t.Helper()
	out := map[string]*corev1.Pod{}
	deadline := time.Now().Add(timeout)
	for _, comp := range components {
		out[comp] = c.waitMirror(t, comp, max(time.Until(deadline), time.Second), "Running and Ready", runningReady)
	}
	return out
}

// workload is what runs the one container of pod (a mirror: its status is the static pod's).
func (c *cluster) workload(t require.TestingT, p *corev1.Pod) workload { return c.rt.workload(t, c, p) }

// kubectlRun runs kubectl as kubernetes-admin and returns its standard output, or an error with
// its standard error.
func (c *cluster) kubectlRun(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.kubectl, append([]string{"--kubeconfig", kubeadmnode.AdminConf}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+c.home)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// clientFor is a client with the credentials of a kubeconfig kubeadm wrote. Each request has a
// deadline: a request to an API server that is being replaced must fail, not hang a poll.
func clientFor(t *testing.T, kubeconfig string) kubernetes.Interface {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	require.NoError(t, err)
	cfg.Timeout = 15 * time.Second
	cs, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	return cs
}

// readManifests is the content of every file in kubeadm's manifest directory, by name.
func readManifests(t *testing.T) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(kubeadmnode.ManifestDir)
	require.NoError(t, err)
	out := map[string]string{}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(kubeadmnode.ManifestDir, e.Name()))
		require.NoError(t, err)
		out[e.Name()] = string(data)
	}
	return out
}

// stopControlPlane removes kubeadm's manifests and waits until the agent has stopped their
// containers, so that the agent's own clean-up (agentproc.StartInTest) and the runtime's find
// none left.
func stopControlPlane(t *testing.T, c *cluster) {
	t.Helper()
	entries, _ := os.ReadDir(kubeadmnode.ManifestDir)
	for _, e := range entries {
		if err := os.Remove(filepath.Join(kubeadmnode.ManifestDir, e.Name())); err != nil {
			t.Errorf("remove manifest: %v", err)
		}
	}
	c.rt.waitStopped(t, c)
}

// step runs f as subtest name and stops the test when it fails: each step needs the ones
// before it.
func step(t *testing.T, name string, f func(t *testing.T)) {
	t.Helper()
	if !t.Run(name, f) {
		t.FailNow()
	}
}
