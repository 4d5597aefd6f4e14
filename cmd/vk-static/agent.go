package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/internal/version"
	"github.com/vk-static/vk-static/mirror"
	"github.com/vk-static/vk-static/node"
	"github.com/vk-static/vk-static/podmanager"
	"github.com/vk-static/vk-static/provider/mock"
	"github.com/vk-static/vk-static/sources"
)

// controller is what runAgent starts and waits for.
type controller interface {
	Run(ctx context.Context) error
}

// muxController adapts sources.Mux, whose Run cannot fail, to controller.
type muxController struct{ *sources.Mux }

func (m muxController) Run(ctx context.Context) error {
	m.Mux.Run(ctx)
	return nil
}

// runAgent wires sources → merger → pod controller → provider, and, with a kubeconfig, the
// API source, mirror pods, the node controller and events. It returns when ctx is cancelled
// and everything it started has stopped, or when a component fails.
func runAgent(ctx context.Context, o *options) error {
	logger := klog.FromContext(ctx)
	nodeName, err := o.nodeName()
	if err != nil {
		return err
	}
	nodeIP := o.NodeIP
	if nodeIP == "" {
		nodeIP = defaultNodeIP()
	}
	if err := os.MkdirAll(o.RootDir, 0o750); err != nil {
		return fmt.Errorf("--root-dir: %w", err)
	}
	provider, err := mock.New(mock.Config{NodeName: nodeName, InternalIP: nodeIP, Pods: *resource.NewQuantity(int64(o.MaxPods), resource.DecimalSI)})
	if err != nil {
		return err
	}

	var client, eventClient kubernetes.Interface
	if o.Kubeconfig != "" {
		if client, err = newClient(o, o.KubeAPIQPS, o.KubeAPIBurst); err != nil {
			return err
		}
		// Events get their own rate limit, as with the kubelet's --event-qps: they must never
		// use up the budget of status writes.
		if eventClient, err = newClient(o, o.EventQPS, o.EventBurst); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var nodeGetter mirror.NodeGetter
	var mirrorClient mirror.Client
	var nodes *nodeWatch
	if client != nil {
		nodes = newNodeWatch(client, nodeName)
		nodeGetter = nodes
		mirrorClient = mirror.NewBasicMirrorClient(client, nodeName, nodeGetter)
	}
	pods := podmanager.NewBasicPodManager(mirrorClient)
	registry := prometheus.NewRegistry()
	metrics := node.NewMetrics(registry, pods)
	var recorder record.EventRecorder
	var controllers []controller
	if limiter := applyMemoryLimit(o, logger); limiter != nil {
		controllers = append(controllers, limiter)
	}
	if client != nil {
		events := node.NewEventRecorder(eventClient.CoreV1(), corev1.EventSource{Component: "vk-static", Host: nodeName},
			node.EventRecorderOptions{Metrics: metrics})
		recorder = events
		controllers = append(controllers, events)
	}
	problems := &node.NodeProblemReporter{NodeName: nodeName, Recorder: recorder, Metrics: metrics, Logger: logger}

	runner, err := newSourceRunner(o, nodeName, client, problems)
	if err != nil {
		return err
	}
	podController, err := node.NewPodController(node.PodControllerConfig{
		NodeName: nodeName,
		Provider: provider,
		Pods:     pods,
		Updates:  runner.Updates(),
		Client:   client,
		Node:     nodeGetter,
		Recorder: recorder,
		Workers:  o.PodSyncWorkers,
		Metrics:  metrics,

		SyncFrequency: o.SyncFrequency,
	})
	if err != nil {
		return err
	}
	controllers = append(controllers, muxController{runner}, podController)

	if client != nil {
		nodes.notify(podController.RequeueMirrors)
		controllers = append(controllers, nodes)
		nodeObject, err := nodeObject(o, nodeName, nodeIP, provider)
		if err != nil {
			return err
		}
		nodeController, err := node.NewNodeController(provider, nodeObject, client.CoreV1().Nodes(),
			node.WithNodeEnableLeaseV1(client.CoordinationV1().Leases(corev1.NamespaceNodeLease), o.NodeLeaseDurationSeconds),
			node.WithNodeStatusUpdateInterval(o.NodeStatusUpdateFrequency))
		if err != nil {
			return err
		}
		controllers = append(controllers, nodeController)
	}
	if o.HealthzPort > 0 {
		controllers = append(controllers, &healthzServer{
			addr:      net.JoinHostPort(o.HealthzBindAddress, strconv.Itoa(int(o.HealthzPort))),
			registry:  registry,
			profiling: o.Profiling,
			ready:     podController.Ready(),
		})
	}

	logger.Info("Starting vk-static", "version", version.Version, "node", nodeName, "nodeIP", nodeIP,
		"standalone", client == nil, "manifestPath", o.PodManifestPath, "manifestURL", o.ManifestURL != "")
	return runAll(ctx, cancel, controllers)
}

// runAll runs every controller until ctx is cancelled or one of them fails, and returns after
// all have stopped.
func runAll(ctx context.Context, cancel context.CancelFunc, controllers []controller) error {
	var wg sync.WaitGroup
	errs := make([]error, len(controllers))
	for i, c := range controllers {
		wg.Go(func() {
			errs[i] = c.Run(ctx)
			if errs[i] != nil {
				cancel() // one failed: stop the others
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func newClient(o *options, qps float32, burst int32) (kubernetes.Interface, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", o.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("--kubeconfig: %w", err)
	}
	cfg.QPS, cfg.Burst = qps, int(burst)
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cfg.UserAgent = "vk-static/" + version.Version
	return kubernetes.NewForConfig(cfg)
}

// nodeObject is the Node this agent registers. Its taints are --register-with-taints plus
// the provider's (the mock's keeps real workloads off a node that runs nothing).
//
// Its daemonEndpoints stay unset (port 0) while nothing serves the kubelet HTTP API: an
// advertised port would send the API server's logs, exec and port-forward requests to a port
// nothing listens on. --port and --address are parsed and validated already; the HTTP API,
// once it listens, sets Status.DaemonEndpoints.KubeletEndpoint.Port here from o.Port.
func nodeObject(o *options, nodeName, nodeIP string, provider *mock.Provider) (*corev1.Node, error) {
	taints, err := o.taints()
	if err != nil {
		return nil, err
	}
	labels := map[string]string{
		corev1.LabelHostname:   nodeName,
		corev1.LabelOSStable:   runtime.GOOS,
		corev1.LabelArchStable: runtime.GOARCH,
	}
	for k, v := range o.NodeLabels {
		labels[k] = v
	}
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: nodeName, Labels: labels},
		Spec:       corev1.NodeSpec{Taints: taints},
		Status: corev1.NodeStatus{
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: nodeIP},
				{Type: corev1.NodeHostName, Address: nodeName},
			},
			NodeInfo: corev1.NodeSystemInfo{
				KubeletVersion:  kubeletVersion(),
				OperatingSystem: runtime.GOOS,
				Architecture:    runtime.GOARCH,
			},
		},
	}
	provider.ConfigureNode(n)
	return n, nil
}

// kubeletVersion is what `kubectl get nodes` shows: the Kubernetes API line vk-static
// implements, and vk-static's own version.
func kubeletVersion() string {
	return "v1.36.3-vk-static+" + version.Version
}

// defaultNodeIP is the first non-loopback address of the hostname, else of any interface, as
// the kubelet picks one; tests and single-host setups pass --node-ip.
func defaultNodeIP() string {
	if h, err := os.Hostname(); err == nil {
		if ips, err := net.LookupIP(h); err == nil {
			for _, ip := range ips {
				if !ip.IsLoopback() && ip.To4() != nil {
					return ip.String()
				}
			}
		}
	}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if ipnet, ok := a.(*net.IPNet); ok && !ipnet.IP.IsLoopback() && ipnet.IP.To4() != nil {
				return ipnet.IP.String()
			}
		}
	}
	return "127.0.0.1"
}

// newSourceRunner configures the file, HTTP and API sources the options ask for.
func newSourceRunner(o *options, nodeName string, client kubernetes.Interface, problems sources.ProblemReporter) (*sources.Mux, error) {
	var srcs []sources.Source
	if o.PodManifestPath != "" {
		s, err := sources.NewFileSource(sources.FileConfig{
			Path: o.PodManifestPath, NodeName: nodeName, CheckFrequency: o.FileCheckFrequency, Problems: problems,
		})
		if err != nil {
			return nil, fmt.Errorf("--pod-manifest-path: %w", err)
		}
		srcs = append(srcs, s)
	}
	if o.ManifestURL != "" {
		header, err := o.manifestHeader()
		if err != nil {
			return nil, err
		}
		s, err := sources.NewHTTPSource(sources.HTTPConfig{
			URL: o.ManifestURL, Header: header, NodeName: nodeName, CheckFrequency: o.HTTPCheckFrequency, Problems: problems,
		})
		if err != nil {
			return nil, fmt.Errorf("--manifest-url: %w", err)
		}
		srcs = append(srcs, s)
	}
	if client != nil {
		srcs = append(srcs, sources.NewAPISource(client, nodeName))
	}
	return sources.NewMux(problems, srcs...), nil
}
