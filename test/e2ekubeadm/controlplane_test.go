package e2ekubeadm

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

	"github.com/vk-static/vk-static/test/support/agentproc"
	"github.com/vk-static/vk-static/test/support/kubeadmnode"
	"github.com/vk-static/vk-static/test/support/podwait"
)

// node is the control-plane node: kubeadm's nodeRegistration.name, the agent's
// --hostname-override. They must agree: kubelet.conf's identity is system:node:<name>, and
// NodeRestriction refuses a Node or mirror of any other name.
const node = "kubeadm-cp"

// Upper bounds, generous for two busy cores and an agent built with the race detector.
const (
	apiServerTimeout = 5 * time.Minute // from the manifests' writing to an API server that answers
	mirrorTimeout    = 5 * time.Minute // from an answering API server to Running and Ready mirrors
	restartTimeout   = 3 * time.Minute
)

// TestKubeadmControlPlane: kubeadm's control plane, from its unmodified manifests, run by
// vk-static as a kubeadm node's kubelet runs it (see the package documentation), with the
// process provider: the containers are host processes running the test control plane's
// binaries.
func TestKubeadmControlPlane(t *testing.T) { testControlPlane(t, processRuntime{}) }

// TestKubeadmControlPlaneCRI is the same with --provider cri on a containerd of the test's
// own, which runs kubeadm's images, built from the same binaries and imported.
func TestKubeadmControlPlaneCRI(t *testing.T) { testControlPlane(t, &criRuntime{}) }

// testControlPlane is the scenario, on runtime rt. Each step needs the one before it; the
// first that fails ends the test.
func testControlPlane(t *testing.T, rt nodeRuntime) {
	ctx := context.Background()
	freshKubeadmPaths(t) // first: unmounted last
	bins, err := kubeadmnode.FindBinaries()
	require.NoError(t, err)
	dir := t.TempDir()
	c := &cluster{node: node, rt: rt, kubeadm: kubeadmRunner{kubeadmnode.Kubeadm{Path: bins.Kubeadm, Home: dir}}, kubectl: bins.Kubectl, home: dir}
	config := writeConfig(t, dir, "kubeadm.yaml", nil)
	providerArgs := rt.start(t, bins) // its clean-up runs after the agent's

	c.kubeadm.run(t, "init", "phase", "certs", "all", "--config", config)
	c.kubeadm.run(t, "init", "phase", "kubeconfig", "all", "--config", config)
	// The agent starts now, with kubeadm's kubelet.conf, before there is a manifest or an API
	// server, as the kubelet of `kubeadm init` does. kubeadm's CA signed the API server's
	// kubelet client certificate: with it the agent knows the API server calling its API.
	c.agent = agentproc.StartInTest(t, agentproc.Config{Binary: agentBinary, Dir: t.TempDir(), Node: node, Args: append([]string{
		"--kubeconfig", kubeadmnode.KubeletConf, "--pod-manifest-path", kubeadmnode.ManifestDir, "--client-ca-file", kubeadmnode.CAFile,
		"--node-ip", nodeIP.String(), "--address", nodeIP.String(),
		"--node-status-update-frequency", "2s", "-v", "2",
	}, providerArgs...)})
	t.Cleanup(func() { stopControlPlane(t, c) }) // before the agent's own clean-up
	c.kubeadm.run(t, "init", "phase", "etcd", "local", "--config", config)
	c.kubeadm.run(t, "init", "phase", "control-plane", "all", "--config", config)
	written := readManifests(t)
	require.Len(t, written, len(components), "kubeadm's manifests: %v", written)

	step(t, "APIServerAnswers", func(t *testing.T) {
		super := clientFor(t, kubeadmnode.SuperAdminConf) // system:masters: admin.conf has no rights yet
		require.EventuallyWithT(t, func(ct *assert.CollectT) {
			rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			body, err := super.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(rctx)
			require.NoError(ct, err, "%s", body)
		}, apiServerTimeout, time.Second, "kube-apiserver (a static pod of the agent's) answers /readyz at https://%s:6443", nodeIP)
		// RBAC for kubernetes-admin, bootstrap tokens and the API server's calls to the kubelet
		// API (kubectl logs), and a first token.
		c.kubeadm.run(t, "init", "phase", "bootstrap-token", "--config", config)
		c.admin = clientFor(t, kubeadmnode.AdminConf)
	})

	step(t, "NodeAndMirrors", func(t *testing.T) {
		n := c.waitNodeReady(t, node, mirrorTimeout)
		mirrors := c.allRunningReady(t, components, mirrorTimeout)
		for _, comp := range components {
			p := mirrors[comp]
			assert.Equal(t, []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: node, UID: n.UID, Controller: ptr.To(true)}},
				withoutBlockOwnerDeletion(p.OwnerReferences), "%s: owned by the Node", p.Name)
			assert.Equal(t, "file", p.Annotations["kubernetes.io/config.source"], p.Name)
			assert.NotEmpty(t, p.Annotations["kubernetes.io/config.hash"], p.Name)
			assert.Equal(t, p.Annotations["kubernetes.io/config.hash"], p.Annotations["kubernetes.io/config.mirror"], p.Name)
			assert.Equal(t, map[string]string{"component": comp, "tier": "control-plane"}, p.Labels, p.Name)
			assert.Equal(t, "system-node-critical", p.Spec.PriorityClassName, p.Name)
			assert.Equal(t, ptr.To[int32](2000001000), p.Spec.Priority, p.Name)
			assert.True(t, p.Spec.HostNetwork, p.Name)
			assert.Equal(t, nodeIP.String(), p.Status.PodIP, p.Name)
			rt.checkMirror(t, p)
		}
		// kubeadm's own annotations, which kubeadm join and upgrade read back from the mirrors.
		assert.Equal(t, nodeIP.String()+":6443", mirrors["kube-apiserver"].Annotations["kubeadm.kubernetes.io/kube-apiserver.advertise-address.endpoint"])
		assert.Equal(t, "https://"+nodeIP.String()+":2379", mirrors["etcd"].Annotations["kubeadm.kubernetes.io/etcd.advertise-client-urls"])
		assert.Equal(t, written, readManifests(t), "the manifests are still kubeadm's, byte for byte")
	})

	step(t, "Logs", func(t *testing.T) {
		// Through the API server, which calls the agent's API as kube-apiserver-kubelet-client:
		// authenticated by kubeadm's CA, authorized by the binding kubeadm's bootstrap-token phase made.
		for _, comp := range components {
			require.EventuallyWithT(t, func(ct *assert.CollectT) {
				out, err := c.kubectlRun("logs", "-n", metav1.NamespaceSystem, c.mirrorName(comp), "--tail", "3")
				require.NoError(ct, err)
				assert.NotEmpty(ct, strings.TrimSpace(out))
			}, time.Minute, time.Second, "kubectl logs %s", c.mirrorName(comp))
		}
	})

	step(t, "Scheduling", func(t *testing.T) {
		ns, err := c.admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "scheduling"}}, metav1.CreateOptions{})
		require.NoError(t, err)
		pod := rt.apiPod()
		// The kube-controller-manager makes the namespace's default ServiceAccount and
		// kube-root-ca.crt, which the pod's token volume needs; until then admission refuses it.
		require.EventuallyWithT(t, func(ct *assert.CollectT) {
			_, err := c.admin.CoreV1().ConfigMaps(ns.Name).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
			require.NoError(ct, err)
			_, err = c.admin.CoreV1().Pods(ns.Name).Create(ctx, pod, metav1.CreateOptions{})
			require.NoError(ct, err)
		}, time.Minute, 500*time.Millisecond, "pod %s/%s created", ns.Name, pod.Name)
		// Gone before the step ends, passed or failed: with the API server gone (the test's
		// clean-up), the agent could never learn that it was deleted.
		t.Cleanup(func() {
			if err := c.admin.CoreV1().Pods(ns.Name).Delete(ctx, pod.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Error(err)
			}
			podwait.Gone(t, c.admin, ns.Name, pod.Name, time.Minute)
		})
		p := podwait.Until(t, c.admin, ns.Name, pod.Name, 2*time.Minute, "scheduled to "+node+" and running", func(p *corev1.Pod) error {
			if p.Spec.NodeName != node {
				return fmt.Errorf("nodeName %q, conditions %s", p.Spec.NodeName, podwait.Describe(p.Status.Conditions))
			}
			return podwait.MainRunning(p)
		})
		rt.checkAPIPod(t, p)
		require.EventuallyWithT(t, func(ct *assert.CollectT) {
			events, err := c.admin.CoreV1().Events(ns.Name).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + pod.Name + ",reason=Scheduled"})
			require.NoError(ct, err)
			require.NotEmpty(ct, events.Items, "no Scheduled event")
			assert.Contains(ct, events.Items[0].Message, node)
			assert.Contains(ct, []string{events.Items[0].ReportingController, events.Items[0].Source.Component}, "default-scheduler")
		}, 30*time.Second, 500*time.Millisecond, "the scheduler's Scheduled event for %s/%s", ns.Name, pod.Name)
	})

	step(t, "AgentRestart", func(t *testing.T) {
		before := map[string]*corev1.Pod{}
		workloads := map[string]workload{}
		for _, comp := range components {
			p, err := c.mirror(ctx, comp)
			require.NoError(t, err)
			before[comp], workloads[comp] = p, c.workload(t, p)
			require.True(t, workloads[comp].running(), "%s: %s runs", comp, workloads[comp])
		}
		lease, err := c.admin.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, node, metav1.GetOptions{})
		require.NoError(t, err)
		rctx, cancel := context.WithTimeout(ctx, restartTimeout)
		defer cancel()
		require.NoError(t, c.agent.Restart(rctx, 20*time.Second)) // SIGTERM, then the same command line
		after := c.allRunningReady(t, components, restartTimeout)
		for _, comp := range components {
			assert.Equal(t, before[comp].UID, after[comp].UID, "%s: the same mirror", comp)
			assert.Equal(t, before[comp].Status.ContainerStatuses[0].ContainerID, after[comp].Status.ContainerStatuses[0].ContainerID, "%s: the same container", comp)
			assert.True(t, workloads[comp].running(), "%s: %s still runs", comp, workloads[comp])
			w := c.workload(t, after[comp])
			assert.Equal(t, workloads[comp].pid, w.pid, "%s: the same process", comp)
			assert.Equal(t, workloads[comp].started, w.started, "%s: the same start of its container", comp)
		}
		require.EventuallyWithT(t, func(ct *assert.CollectT) {
			l, err := c.admin.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, node, metav1.GetOptions{})
			require.NoError(ct, err)
			assert.True(ct, l.Spec.RenewTime.After(lease.Spec.RenewTime.Time), "renewed at %v, before the restart at %v", l.Spec.RenewTime, lease.Spec.RenewTime)
		}, time.Minute, 500*time.Millisecond, "the restarted agent renews the Node's Lease")
		// Again once the restarted agent has been at work a while: the mirrors read above may
		// still have had the old agent's statuses. The new one reruns the probes of the
		// containers it takes up, and until they pass reports them not ready (or not started),
		// as a restarted kubelet does; they end Running and Ready, the same containers.
		again := c.allRunningReady(t, components, restartTimeout)
		for _, comp := range components {
			assert.Equal(t, before[comp].Status.ContainerStatuses[0].ContainerID, again[comp].Status.ContainerStatuses[0].ContainerID, "%s: the same container", comp)
			assert.Equal(t, workloads[comp].pid, c.workload(t, again[comp]).pid, "%s: the same process", comp)
		}
	})

	step(t, "EditAPIServer", func(t *testing.T) {
		old, err := c.mirror(ctx, "kube-apiserver")
		require.NoError(t, err)
		oldWorkload := c.workload(t, old)
		edited := writeConfig(t, dir, "kubeadm-event-ttl.yaml", map[string]string{"event-ttl": "2h0m0s"})
		c.kubeadm.run(t, "init", "phase", "control-plane", "apiserver", "--config", edited)
		p := c.waitMirror(t, "kube-apiserver", restartTimeout, "replaced: a new UID and hash, --event-ttl, Running and Ready", func(p *corev1.Pod) error {
			switch {
			case p.UID == old.UID:
				return fmt.Errorf("still the old UID %s", p.UID)
			case p.Annotations["kubernetes.io/config.hash"] == old.Annotations["kubernetes.io/config.hash"]:
				return fmt.Errorf("still the old config.hash %s", p.Annotations["kubernetes.io/config.hash"])
			}
			return runningReady(p)
		})
		assert.Contains(t, p.Spec.Containers[0].Command, "--event-ttl=2h0m0s")
		assert.Equal(t, p.Annotations["kubernetes.io/config.hash"], p.Annotations["kubernetes.io/config.mirror"])
		assert.False(t, oldWorkload.running(), "the old kube-apiserver (%s) stopped", oldWorkload)
		assert.NotEqual(t, oldWorkload.pid, c.workload(t, p).pid)
		// The cluster comes back: the controller manager and the scheduler lose their leases
		// while the API server is replaced and may restart; all four end Running and Ready.
		c.waitNodeReady(t, node, restartTimeout)
		c.allRunningReady(t, components, restartTimeout)
	})

	step(t, "RemoveScheduler", func(t *testing.T) {
		p, err := c.mirror(ctx, "kube-scheduler")
		require.NoError(t, err)
		w := c.workload(t, p)
		require.NoError(t, os.Remove(filepath.Join(kubeadmnode.ManifestDir, "kube-scheduler.yaml")))
		podwait.Gone(t, c.admin, metav1.NamespaceSystem, c.mirrorName("kube-scheduler"), 2*time.Minute)
		require.Eventually(t, func() bool { return !w.running() }, time.Minute, 200*time.Millisecond, "the scheduler (%s) stops", w)
		c.allRunningReady(t, []string{"etcd", "kube-apiserver", "kube-controller-manager"}, time.Minute)
	})

	if rt.join() {
		step(t, "Join", func(t *testing.T) { c.testJoin(t) })
	}
}

// withoutBlockOwnerDeletion is refs with BlockOwnerDeletion cleared: which value it has is not
// part of the mirror's contract (the kubelet leaves it unset).
func withoutBlockOwnerDeletion(refs []metav1.OwnerReference) []metav1.OwnerReference {
	out := make([]metav1.OwnerReference, len(refs))
	for i, r := range refs {
		r.BlockOwnerDeletion = nil
		out[i] = r
	}
	return out
}
