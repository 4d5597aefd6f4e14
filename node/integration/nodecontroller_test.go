package integration

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/vk-static/vk-static/node"
	"github.com/vk-static/vk-static/provider"
	"github.com/vk-static/vk-static/provider/mock"
)

// These tests run the NodeController against the package's real API server ([env]) as
// the node's own identity, under the Node authorizer and NodeRestriction.

const (
	itRenewInterval  = 200 * time.Millisecond
	itPingInterval   = 100 * time.Millisecond
	itStatusInterval = 300 * time.Millisecond
	itWait           = 20 * time.Second
)

// integrationNode is the Node the agent registers as name; its conditions are the
// NodeController's defaults.
func integrationNode(name string) *corev1.Node {
	capacity := corev1.ResourceList{corev1.ResourcePods: resource.MustParse("110"), corev1.ResourceCPU: resource.MustParse("4")}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name, "tier": "edge"}},
		Spec:       corev1.NodeSpec{Taints: []corev1.Taint{{Key: "vk", Effect: corev1.TaintEffectNoSchedule}}},
		Status: corev1.NodeStatus{
			Capacity:        capacity,
			Allocatable:     capacity.DeepCopy(),
			Addresses:       []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}, {Type: corev1.NodeHostName, Address: name}},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
			NodeInfo:        corev1.NodeSystemInfo{KubeletVersion: "v1.36.3-vk", OperatingSystem: "linux", Architecture: "amd64"},
		},
	}
}

func condition(n *corev1.Node, typ corev1.NodeConditionType) corev1.NodeCondition {
	for _, c := range n.Status.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return corev1.NodeCondition{}
}

// runIntegrationController starts a controller for node name with that node's identity and
// stops it (checking for leaks) when the test ends.
func runIntegrationController(t *testing.T, name string, p provider.NodeProvider) (*node.NodeController, kubernetes.Interface) {
	t.Helper()
	_, cs, verifyNoLeaks := env.LeakCheckedNodeClient(t, name, itWait)
	c, err := node.NewNodeController(p, integrationNode(name), cs.CoreV1().Nodes(),
		node.WithNodeEnableLeaseV1WithRenewInterval(cs.CoordinationV1().Leases(corev1.NamespaceNodeLease), 40, itRenewInterval),
		node.WithNodePingInterval(itPingInterval),
		node.WithNodeStatusUpdateInterval(itStatusInterval),
		node.WithNodeStatusReportFrequency(itStatusInterval), // heartbeats at every interval, for the tests that wait for one
	)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _ = c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-c.Done()
		assert.NoError(t, c.Err())
		verifyNoLeaks()
		_ = env.Admin.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{})
		_ = env.Admin.CoordinationV1().Leases(corev1.NamespaceNodeLease).Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	select {
	case <-c.Ready():
	case <-time.After(itWait):
		t.Fatalf("node %s not registered", name)
	}
	return c, cs
}

func adminNode(t *testing.T, name string) *corev1.Node {
	t.Helper()
	n, err := env.Admin.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	require.NoError(t, err)
	return n
}

func adminRenewTime(t *testing.T, name string) time.Time {
	t.Helper()
	l, err := env.Admin.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return time.Time{}
	}
	require.NoError(t, err)
	return l.Spec.RenewTime.Time
}

// waitRenewals waits until the lease's renewTime has advanced n times.
func waitRenewals(t *testing.T, name string, n int) {
	t.Helper()
	last, seen := adminRenewTime(t, name), 0
	require.Eventually(t, func() bool {
		if now := adminRenewTime(t, name); now.After(last) {
			last, seen = now, seen+1
		}
		return seen >= n
	}, itWait, 20*time.Millisecond, "lease %s did not renew %d times", name, n)
}

func TestNodeControllerIntegrationRegistersAndRenews(t *testing.T) {
	const name = "nc-register"
	_, _ = runIntegrationController(t, name, &mock.NodeProvider{})

	n := adminNode(t, name)
	assert.Equal(t, corev1.ConditionTrue, condition(n, corev1.NodeReady).Status)
	assert.Equal(t, corev1.ConditionFalse, condition(n, corev1.NodePIDPressure).Status)
	assert.Equal(t, "edge", n.Labels["tier"])
	assert.Contains(t, n.Spec.Taints, corev1.Taint{Key: "vk", Effect: corev1.TaintEffectNoSchedule})
	assert.Equal(t, "110", n.Status.Allocatable.Pods().String())
	assert.Equal(t, int32(10250), n.Status.DaemonEndpoints.KubeletEndpoint.Port)
	assert.Equal(t, "v1.36.3-vk", n.Status.NodeInfo.KubeletVersion)
	assert.Contains(t, n.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "127.0.0.1"})

	waitRenewals(t, name, 3)
	l, err := env.Admin.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(context.Background(), name, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, name, *l.Spec.HolderIdentity)
	assert.Equal(t, int32(40), *l.Spec.LeaseDurationSeconds)
	assert.Equal(t, []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: name, UID: n.UID}}, l.OwnerReferences)
}

func TestNodeControllerIntegrationPingFailure(t *testing.T) {
	const name = "nc-ping"
	p := &mock.NodeProvider{}
	_, _ = runIntegrationController(t, name, p)
	waitRenewals(t, name, 1)

	p.SetPingError(errors.New("backend down"))
	require.Eventually(t, func() bool {
		return condition(adminNode(t, name), corev1.NodeReady).Status == corev1.ConditionFalse
	}, itWait, 20*time.Millisecond)
	assert.Contains(t, condition(adminNode(t, name), corev1.NodeReady).Message, "backend down")

	// Ping failed before Ready went False, and a renewal stamps renewTime only after checking
	// Ping: no renewTime may be later than this moment, for many renew intervals.
	notReadySeen := time.Now()
	require.Never(t, func() bool {
		return adminRenewTime(t, name).After(notReadySeen)
	}, 10*itRenewInterval, itRenewInterval/4, "lease renewed while the provider failed")

	p.SetPingError(nil)
	require.Eventually(t, func() bool {
		return condition(adminNode(t, name), corev1.NodeReady).Status == corev1.ConditionTrue
	}, itWait, 20*time.Millisecond)
	waitRenewals(t, name, 2)
}

func TestNodeControllerIntegrationRecreatesDeletedNode(t *testing.T) {
	const name = "nc-recreate"
	_, _ = runIntegrationController(t, name, &mock.NodeProvider{})
	old := adminNode(t, name)
	require.NoError(t, env.Admin.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}))

	var recreated *corev1.Node
	require.Eventually(t, func() bool {
		n, err := env.Admin.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil || n.UID == old.UID {
			return false
		}
		recreated = n
		return true
	}, itWait, 20*time.Millisecond, "node not re-created")
	assert.Equal(t, corev1.ConditionTrue, condition(recreated, corev1.NodeReady).Status)
	assert.Equal(t, "edge", recreated.Labels["tier"])

	// The lease follows the new incarnation.
	require.Eventually(t, func() bool {
		l, err := env.Admin.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(context.Background(), name, metav1.GetOptions{})
		return err == nil && len(l.OwnerReferences) == 1 && l.OwnerReferences[0].UID == recreated.UID
	}, itWait, 20*time.Millisecond, "lease owner not updated to the new node UID")
}

func TestNodeControllerIntegrationKeepsOthersFields(t *testing.T) {
	const name = "nc-foreign"
	_, _ = runIntegrationController(t, name, &mock.NodeProvider{})
	ctx := context.Background()

	// An admin labels the node and another controller reports a condition of its own.
	_, err := env.Admin.CoreV1().Nodes().Patch(ctx, name, types.StrategicMergePatchType,
		[]byte(`{"metadata":{"labels":{"team":"admins"}}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	_, err = env.Admin.CoreV1().Nodes().Patch(ctx, name, types.StrategicMergePatchType,
		[]byte(`{"status":{"conditions":[{"type":"NetworkUnavailable","status":"False","reason":"RouteCreated"}]}}`), metav1.PatchOptions{}, "status")
	require.NoError(t, err)
	before := condition(adminNode(t, name), corev1.NodeReady).LastHeartbeatTime.Time

	// Heartbeats have second resolution: a second later, several status writes have happened.
	require.Eventually(t, func() bool {
		return condition(adminNode(t, name), corev1.NodeReady).LastHeartbeatTime.Time.Sub(before) >= time.Second
	}, itWait, 50*time.Millisecond, "no heartbeat")
	n := adminNode(t, name)
	assert.Equal(t, "admins", n.Labels["team"])
	assert.Equal(t, "edge", n.Labels["tier"])
	assert.Equal(t, corev1.ConditionFalse, condition(n, "NetworkUnavailable").Status)
	assert.Equal(t, "RouteCreated", condition(n, "NetworkUnavailable").Reason)
	assert.Equal(t, corev1.ConditionTrue, condition(n, corev1.NodeReady).Status)
}

func TestNodeControllerIntegrationAdoptsExistingNode(t *testing.T) {
	const name = "nc-existing"
	ctx := context.Background()
	existing := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"team": "admins"}}}
	_, err := env.Admin.CoreV1().Nodes().Create(ctx, existing, metav1.CreateOptions{})
	require.NoError(t, err)

	_, _ = runIntegrationController(t, name, &mock.NodeProvider{})
	n := adminNode(t, name)
	assert.Equal(t, "admins", n.Labels["team"])
	assert.Equal(t, "edge", n.Labels["tier"], "owned labels are patched onto an existing node")
	assert.Equal(t, corev1.ConditionTrue, condition(n, corev1.NodeReady).Status)
	assert.Equal(t, "110", n.Status.Capacity.Pods().String())
	assert.Equal(t, int32(10250), n.Status.DaemonEndpoints.KubeletEndpoint.Port)
}
