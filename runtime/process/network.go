package process

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/lifecycle"
	"github.com/vk-static/vk-static/lifecycle/dns"
	"github.com/vk-static/vk-static/runtime/process/internal/podnet"
)

// ErrNetworkNotReady: a pod needs the pod network and the node has none (no CNI
// configuration), as a kubelet's pods wait on a node whose network plugin is not ready.
var ErrNetworkNotReady = errors.New("network is not ready")

// ownNetwork decides whether a restricted pod gets a network namespace of its own on the pod
// network: one that does not ask for hostNetwork, when the node has a pod network. Without one
// it runs on the host's network with Config.AllowHostNetwork, and otherwise waits: RunSandbox
// fails (ErrNetworkNotReady), the lifecycle says so in a FailedCreatePodSandBox event and
// tries again, as a kubelet's pods wait on a node whose network plugin is not ready — until a
// CNI configuration appears (a network DaemonSet writes it).
func (r *Runtime) ownNetwork(pod *corev1.Pod) (bool, error) {
	if !r.restricted(pod) || pod.Spec.HostNetwork {
		return false, nil
	}
	why := errors.New("no pod network is configured (--cni-conf-dir)")
	if r.network != nil {
		if why = r.network.Ready(); why == nil {
			return true, nil
		}
	}
	if r.cfg.AllowHostNetwork {
		return false, nil
	}
	return false, fmt.Errorf("%w (%w): %s needs a pod network, or the agent's --process-allow-host-network to run on the host's", ErrNetworkNotReady, why, whose(pod))
}

// attach puts the sandbox's network namespace (its holder's) on the pod network, and records
// its addresses.
func (r *Runtime) attach(ctx context.Context, rec *sandboxRecord) error {
	ips, err := r.network.Add(ctx, r.podnetPod(rec, netnsPath(rec.Holder)))
	if err != nil {
		return err
	}
	rec.Network, rec.IPs = true, ips
	return nil
}

// detach takes the sandbox off the pod network: its address is released and its host ports
// removed. Once the holder is gone (a reboot) there is no namespace to name, and the plugins
// release what they recorded.
func (r *Runtime) detach(ctx context.Context, rec *sandboxRecord) error {
	if !rec.Network {
		return nil
	}
	if r.network == nil {
		return fmt.Errorf("sandbox %s is on the pod network, and the agent has none configured (--cni-conf-dir) to take it off", rec.ID)
	}
	netns := ""
	if holderAlive(rec.Holder) {
		netns = netnsPath(rec.Holder)
	}
	return r.network.Del(ctx, r.podnetPod(rec, netns))
}

func (r *Runtime) podnetPod(rec *sandboxRecord, netns string) podnet.Pod {
	cfg := &rec.Config
	p := podnet.Pod{Namespace: cfg.Namespace, Name: cfg.Name, UID: string(cfg.PodUID), SandboxID: rec.ID, NetNS: netns}
	for _, port := range cfg.Ports {
		if port.HostPort > 0 {
			p.Ports = append(p.Ports, podnet.PortMapping{HostPort: port.HostPort, ContainerPort: port.ContainerPort, Protocol: protocolName(port.Protocol), HostIP: port.HostIP})
		}
	}
	return p
}

// protocolName is a port's protocol as portmap takes it.
func protocolName(p string) string {
	switch p {
	case "", "TCP":
		return "tcp"
	case "UDP":
		return "udp"
	case "SCTP":
		return "sctp"
	}
	return p
}

// The resolver configuration a sandbox's containers see as /etc/resolv.conf: the lifecycle's
// (SandboxConfig.DNS), else, for a pod on the pod network, the host's as such a pod can use it:
// systemd-resolved's list of upstream servers where the host names a resolver on its loopback
// (127.0.0.53), which the pod's network namespace cannot reach, as the kubelet's documentation
// has a node on such a host use (--resolv-conf).
const resolvConfFile = "resolv.conf" // in the sandbox's directory

// writeResolvConf writes the sandbox's resolver configuration into its directory: d, or the
// host's for a pod on the pod network when the lifecycle made none.
func writeResolvConf(dir string, d *dns.Config) error {
	if d == nil {
		var err error
		host := &dns.Configurer{ResolvConf: dns.HostResolvConf, UpstreamResolvConf: dns.ResolvedResolvConf}
		if d, _, err = host.PodDNS(&corev1.Pod{Spec: corev1.PodSpec{DNSPolicy: corev1.DNSDefault}}); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, resolvConfFile), d.ResolvConf(), 0o644); err != nil {
		return fmt.Errorf("the pod's resolver configuration: %w", err)
	}
	return nil
}

// resolvConfMount is the mount of the sandbox's resolver configuration, first among a
// container's: a volume the pod mounts there goes over it.
func (r *Runtime) resolvConfMount(sb *sandboxRecord) []lifecycle.Mount {
	if !sb.ResolvConf && !sb.Network {
		return nil
	}
	return []lifecycle.Mount{{HostPath: filepath.Join(r.sandboxDir(sb.ID), resolvConfFile), ContainerPath: dns.HostResolvConf, ReadOnly: true}}
}
