package floor

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
)

// criCallTimeout bounds each CRI call, as the kubelet's --runtime-request-timeout (2 min; the
// kubelet gives RunPodSandbox twice that, so does the CRI floor, to every call alike).
const criCallTimeout = 4 * time.Minute

// CRIAgent is the least work any node agent must do to run static pods on a CRI runtime: for
// each manifest that appears, at once and with no bound on how many at a time, RunPodSandbox,
// CreateContainer and StartContainer per container, beside them the mirror pod's create, and
// then one status patch (Running, each container's ID); for each manifest that goes, the
// mirror's DELETE, StopPodSandbox and RemovePodSandbox (which removes its containers). No
// image checks or pulls (the image is there), no log directory, no status polling, no events,
// no lease, no retries. Set the fields, then call Run once.
type CRIAgent struct {
	Client      kubernetes.Interface // with the node's identity
	Runtime     runtimeapi.RuntimeServiceClient
	Node        string
	ManifestDir string
	Clock       clock.Clock // nil means the real clock

	ready atomic.Bool
}

// Ready reports whether the Node is registered and the manifest directory watched.
func (a *CRIAgent) Ready() bool { return a.ready.Load() }

// criPod is what the CRI floor made of one manifest; done is closed once its start ended.
type criPod struct {
	done    chan struct{}
	sandbox string
}

// Run registers the Node, then starts and stops pods as manifests come and go until ctx is
// cancelled; it returns nil then (once every start and stop begun has ended), or the error
// that kept it from starting.
func (a *CRIAgent) Run(ctx context.Context) error {
	clk := a.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	node, err := registerNode(ctx, a.Client, a.Node, metav1.NewTime(clk.Now()))
	if err != nil {
		return err
	}
	static, err := newStaticSource(a.ManifestDir, node)
	if err != nil {
		return err
	}
	defer static.close()
	jobs := make(chan job, 1024)
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { static.run(ctx, jobs) })
	a.ready.Store(true)
	klog.FromContext(ctx).Info("CRI floor ready", "node", a.Node, "manifestDir", a.ManifestDir)
	pods := map[types.NamespacedName]*criPod{}
	for {
		select {
		case <-ctx.Done():
			return nil
		case j := <-jobs:
			key := types.NamespacedName{Namespace: j.pod.Namespace, Name: j.pod.Name}
			switch j.kind {
			case createMirror:
				p := &criPod{done: make(chan struct{})}
				pods[key] = p
				wg.Go(func() { a.start(ctx, clk, j.pod, p) })
			case deletePod:
				p := pods[key]
				delete(pods, key)
				wg.Go(func() { a.stop(ctx, key, p) })
			}
		}
	}
}

// start runs mirror's pod on the runtime while it creates the mirror, then patches the
// mirror Running with its containers' IDs. Failures are logged, not retried: the bench
// reports a pod never Running.
func (a *CRIAgent) start(ctx context.Context, clk clock.Clock, mirror *corev1.Pod, p *criPod) {
	defer close(p.done)
	log := klog.FromContext(ctx).WithValues("pod", klog.KObj(mirror))
	pods := a.Client.CoreV1().Pods(mirror.Namespace)
	var created *corev1.Pod
	var createErr error
	mirrored := make(chan struct{})
	go func() {
		defer close(mirrored)
		created, createErr = pods.Create(ctx, mirror, metav1.CreateOptions{})
	}()
	ids, err := a.runPod(ctx, mirror, p)
	<-mirrored
	if err != nil || createErr != nil {
		if ctx.Err() == nil {
			log.Error(errors.Join(err, createErr), "start failed")
		}
		return
	}
	st := RunningStatus(created, metav1.NewTime(clk.Now()))
	for i := range st.ContainerStatuses {
		st.ContainerStatuses[i].ContainerID = "containerd://" + ids[i]
	}
	patch, err := patchOf(created, st)
	if err == nil {
		_, err = pods.Patch(ctx, created.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	}
	if err != nil && ctx.Err() == nil {
		log.Error(err, "status patch failed")
	}
}

// runPod makes pod's sandbox (recorded in p) and creates and starts its containers in order,
// returning their IDs. Init containers are not run: cri-50's pods have none.
func (a *CRIAgent) runPod(ctx context.Context, pod *corev1.Pod, p *criPod) ([]string, error) {
	ns := &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_POD}
	if pod.Spec.HostNetwork {
		ns.Network = runtimeapi.NamespaceMode_NODE
	}
	sandboxConfig := &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: pod.Name, Namespace: pod.Namespace, Uid: string(uuid.NewUUID())},
		Linux:    &runtimeapi.LinuxPodSandboxConfig{SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{NamespaceOptions: ns}},
	}
	call, cancel := context.WithTimeout(ctx, criCallTimeout)
	defer cancel()
	sb, err := a.Runtime.RunPodSandbox(call, &runtimeapi.RunPodSandboxRequest{Config: sandboxConfig})
	if err != nil {
		return nil, fmt.Errorf("RunPodSandbox: %w", err)
	}
	p.sandbox = sb.PodSandboxId
	var ids []string
	for _, c := range pod.Spec.Containers {
		cc, err := a.Runtime.CreateContainer(call, &runtimeapi.CreateContainerRequest{
			PodSandboxId: sb.PodSandboxId,
			Config: &runtimeapi.ContainerConfig{
				Metadata: &runtimeapi.ContainerMetadata{Name: c.Name},
				Image:    &runtimeapi.ImageSpec{Image: c.Image},
				Command:  c.Command, Args: c.Args, WorkingDir: c.WorkingDir,
				Linux: &runtimeapi.LinuxContainerConfig{SecurityContext: &runtimeapi.LinuxContainerSecurityContext{NamespaceOptions: ns}},
			},
			SandboxConfig: sandboxConfig,
		})
		if err != nil {
			return nil, fmt.Errorf("CreateContainer %s: %w", c.Name, err)
		}
		if _, err := a.Runtime.StartContainer(call, &runtimeapi.StartContainerRequest{ContainerId: cc.ContainerId}); err != nil {
			return nil, fmt.Errorf("StartContainer %s: %w", c.Name, err)
		}
		ids = append(ids, cc.ContainerId)
	}
	return ids, nil
}

// stop deletes the mirror named key and, once p's start has ended, stops and removes its
// sandbox with its containers (p is nil for a manifest the floor never started).
func (a *CRIAgent) stop(ctx context.Context, key types.NamespacedName, p *criPod) {
	log := klog.FromContext(ctx).WithValues("pod", key)
	err := a.Client.CoreV1().Pods(key.Namespace).Delete(ctx, key.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	if err != nil && !apierrors.IsNotFound(err) && ctx.Err() == nil {
		log.Error(err, "delete mirror failed")
	}
	if p == nil {
		return
	}
	select {
	case <-p.done:
	case <-ctx.Done():
		return
	}
	if p.sandbox == "" {
		return
	}
	call, cancel := context.WithTimeout(ctx, criCallTimeout)
	defer cancel()
	if _, err := a.Runtime.StopPodSandbox(call, &runtimeapi.StopPodSandboxRequest{PodSandboxId: p.sandbox}); err != nil {
		log.Error(err, "StopPodSandbox failed")
		return
	}
	if _, err := a.Runtime.RemovePodSandbox(call, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: p.sandbox}); err != nil {
		log.Error(err, "RemovePodSandbox failed")
	}
}
