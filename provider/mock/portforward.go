package mock

import (
	"context"
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/provider"
)

var _ provider.PortForwardHandler = (*Provider)(nil)

// PortForward connects stream to a simulated server on port that echoes what it receives, until
// the client closes its side (nil) or ctx ends (ctx's error; the stream is closed then, which
// also ends the pending Read). The pod must be running and declare port (TCP) in one of its
// containers' ports: a real pod listens only where its program does, and the declared ports
// are the simulator's stand-in for that. Another port is provider.InvalidInput naming it.
func (p *Provider) PortForward(ctx context.Context, namespace, podName string, port int32, stream io.ReadWriteCloser) error {
	pod, err := p.GetPod(ctx, namespace, podName)
	if err != nil {
		return err
	}
	if pod.Status.Phase != corev1.PodRunning {
		return fmt.Errorf("mock: port-forward to pod %s/%s: the pod is %s, not Running", namespace, podName, pod.Status.Phase)
	}
	if !declaresPort(pod, port) {
		return provider.InvalidInput("mock: port-forward to pod %s/%s: no container declares TCP port %d", namespace, podName, port)
	}
	err = echo(ctx, stream, stream, nil)
	if ctx.Err() != nil {
		stream.Close()
	}
	return err
}

func declaresPort(pod *corev1.Pod, port int32) bool {
	for _, list := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range list {
			for _, cp := range list[i].Ports {
				if cp.ContainerPort == port && (cp.Protocol == "" || cp.Protocol == corev1.ProtocolTCP) {
					return true
				}
			}
		}
	}
	return false
}
