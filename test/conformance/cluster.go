package conformance

import (
	"context"
	"fmt"
	"net/netip"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/test/support/childproc"
	"github.com/vk-static/vk-static/test/support/testenv"
)

// The cluster's networks: the pods' (the controller-manager gives the first node the first
// /24 of it, which the bridge network uses) and the services'.
var (
	ClusterCIDR = netip.MustParsePrefix("10.244.0.0/16")
	NodePodCIDR = netip.MustParsePrefix("10.244.0.0/24")
)

// serviceCIDR is testenv's --service-cluster-ip-range.
const serviceCIDR = "10.0.0.0/24"

// cluster is the control plane: testenv's etcd, kube-apiserver (Node and RBAC authorization,
// NodeRestriction) and kube-controller-manager with every default controller and node IPAM,
// plus kube-scheduler — the specs create pods without a node name.
type cluster struct {
	env             *testenv.Env
	scheduler       *childproc.Process
	adminKubeconfig string
}

func startCluster(ctx context.Context, testBin, schedulerBin, dir, node string) (_ *cluster, err error) {
	logger := klog.FromContext(ctx)
	env, err := testenv.Start(ctx, testenv.Options{
		BinDir: testBin,
		Nodes:  []string{node},
		ControllerManager: &testenv.ControllerManagerOptions{
			Controllers: []string{"*"},
			ExtraArgs: []string{
				"--allocate-node-cidrs", "--cluster-cidr", ClusterCIDR.String(), "--node-cidr-mask-size", "24",
				"--service-cluster-ip-range", serviceCIDR,
			},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("start the control plane: %w", err)
	}
	c := &cluster{env: env, adminKubeconfig: filepath.Join(dir, "admin.kubeconfig")}
	defer func() {
		if err != nil {
			c.stop(dir)
		}
	}()
	logger.Info("Control plane started", "apiserver", env.Host, "dir", env.Dir)
	if err := testenv.WriteKubeconfig(c.adminKubeconfig, env.AdminConfig); err != nil {
		return nil, err
	}
	c.scheduler, err = childproc.Start(childproc.Options{Name: "kube-scheduler", LogPath: filepath.Join(dir, "kube-scheduler.log"), Group: true},
		schedulerBin, "--kubeconfig", c.adminKubeconfig, "--leader-elect=false",
		"--bind-address", "127.0.0.1", "--secure-port", "0", "--v=1")
	if err != nil {
		return nil, err
	}
	return c, nil
}

// stop stops the scheduler and the control plane, keeping the control plane's logs in dir.
func (c *cluster) stop(dir string) {
	c.scheduler.Stop(5 * time.Second)
	for _, name := range []string{"kube-apiserver.log", "kube-controller-manager.log", "etcd.log"} {
		_ = copyFile(filepath.Join(c.env.Dir, name), filepath.Join(dir, name))
	}
	c.env.Stop(false)
}

// waitNodeReady polls until the node is Ready with the pod CIDR the bridge network was made
// for, the scheduler still runs, and the default namespace has its ServiceAccount (the
// controller-manager's): what every spec needs before it starts.
func (c *cluster) waitNodeReady(ctx context.Context, node string, agentExited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	var last string
	for {
		select {
		case <-agentExited:
			return fmt.Errorf("the agent exited before node %s was ready", node)
		case <-ctx.Done():
			return fmt.Errorf("node %s not ready: %w (last: %s)", node, ctx.Err(), last)
		case <-time.After(250 * time.Millisecond):
		}
		if c.scheduler.Exited() {
			return fmt.Errorf("kube-scheduler exited: %v", c.scheduler.Err())
		}
		n, err := c.env.Admin.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			last = "not registered"
			continue
		}
		if err != nil {
			last = err.Error()
			continue
		}
		if n.Spec.PodCIDR == "" {
			last = "no pod CIDR yet"
			continue
		}
		if n.Spec.PodCIDR != NodePodCIDR.String() {
			return fmt.Errorf("node %s got pod CIDR %s, the bridge network serves %s", node, n.Spec.PodCIDR, NodePodCIDR)
		}
		if !nodeReady(n) {
			last = "not Ready"
			continue
		}
		if _, err := c.env.Admin.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{}); err != nil {
			last = "default service account: " + err.Error()
			continue
		}
		return nil
	}
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
