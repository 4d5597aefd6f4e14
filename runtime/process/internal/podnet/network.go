package podnet

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/containernetworking/cni/libcni"
	types100 "github.com/containernetworking/cni/pkg/types/100"
)

// Config is where the node's CNI configuration and plugins are.
type Config struct {
	// ConfDir holds the network configurations; the first by file name is the pod network.
	ConfDir string
	// BinDirs are searched for the plugins, in order.
	BinDirs []string
	// CacheDir is where libcni keeps each attachment's result, for DEL; empty is libcni's
	// default (/var/lib/cni).
	CacheDir string
}

// ErrNoNetwork: the configuration directory holds no network configuration.
var ErrNoNetwork = errors.New("no CNI network configuration")

// Network is the node's pod network.
type Network struct {
	cfg Config
	cni *libcni.CNIConfig
}

// New is the pod network of cfg; its configuration is read at each Add and Del, so that a
// network installed after the agent started (a CNI DaemonSet writes it) is used.
func New(cfg Config) *Network {
	return &Network{cfg: cfg, cni: libcni.NewCNIConfigWithCacheDir(cfg.BinDirs, cfg.CacheDir, nil)}
}

// PortMapping is a host port (the portMappings capability, which portmap serves).
type PortMapping struct {
	HostPort      int32  `json:"hostPort"`
	ContainerPort int32  `json:"containerPort"`
	Protocol      string `json:"protocol"`
	HostIP        string `json:"hostIP,omitempty"`
}

// Pod is one attachment: the pod, its sandbox and the network namespace to attach.
type Pod struct {
	Namespace, Name, UID string
	SandboxID            string
	NetNS                string
	Ports                []PortMapping
}

// ifName is the pod's interface, as every CRI runtime names it.
const ifName = "eth0"

// Ready says why pods cannot be attached: ErrNoNetwork, or a configuration that cannot be read.
func (n *Network) Ready() error {
	_, err := n.load()
	return err
}

// Add attaches pod and returns its addresses, IPv4 first.
func (n *Network) Add(ctx context.Context, pod Pod) ([]string, error) {
	list, err := n.load()
	if err != nil {
		return nil, err
	}
	res, err := n.cni.AddNetworkList(ctx, list, runtimeConf(pod))
	if err != nil {
		return nil, fmt.Errorf("CNI network %q: add the pod: %w", list.Name, err)
	}
	result, err := types100.NewResultFromResult(res)
	if err != nil {
		return nil, fmt.Errorf("CNI network %q: its result: %w", list.Name, err)
	}
	var v4, v6 []string
	for _, ip := range result.IPs {
		if ip.Interface != nil && (*ip.Interface < 0 || *ip.Interface >= len(result.Interfaces) || result.Interfaces[*ip.Interface].Name != ifName) {
			continue // an address of the host's side (a bridge), not the pod's
		}
		if ip.Address.IP.To4() != nil {
			v4 = append(v4, ip.Address.IP.String())
		} else {
			v6 = append(v6, ip.Address.IP.String())
		}
	}
	if len(v4)+len(v6) == 0 {
		return nil, fmt.Errorf("CNI network %q gave the pod no address", list.Name)
	}
	return append(v4, v6...), nil
}

// Del detaches pod: its address is released and its host ports are removed.
func (n *Network) Del(ctx context.Context, pod Pod) error {
	list, err := n.load()
	if err != nil {
		return err
	}
	if err := n.cni.DelNetworkList(ctx, list, runtimeConf(pod)); err != nil {
		return fmt.Errorf("CNI network %q: remove the pod: %w", list.Name, err)
	}
	return nil
}

func runtimeConf(pod Pod) *libcni.RuntimeConf {
	rt := &libcni.RuntimeConf{
		ContainerID: pod.SandboxID,
		NetNS:       pod.NetNS,
		IfName:      ifName,
		Args: [][2]string{
			{"IgnoreUnknown", "1"},
			{"K8S_POD_NAMESPACE", pod.Namespace},
			{"K8S_POD_NAME", pod.Name},
			{"K8S_POD_INFRA_CONTAINER_ID", pod.SandboxID},
			{"K8S_POD_UID", pod.UID},
		},
	}
	if len(pod.Ports) > 0 {
		rt.CapabilityArgs = map[string]any{"portMappings": pod.Ports}
	}
	return rt
}

// load reads the pod network's configuration: the first file of ConfDir by name.
func (n *Network) load() (*libcni.NetworkConfigList, error) {
	files, err := libcni.ConfFiles(n.cfg.ConfDir, []string{".conflist", ".conf", ".json"})
	if err != nil {
		return nil, fmt.Errorf("%w in %s: %w", ErrNoNetwork, n.cfg.ConfDir, err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%w in %s", ErrNoNetwork, n.cfg.ConfDir)
	}
	slices.Sort(files)
	file := files[0]
	if filepath.Ext(file) == ".conflist" {
		list, err := libcni.ConfListFromFile(file)
		if err != nil {
			return nil, fmt.Errorf("CNI configuration %s: %w", file, err)
		}
		return list, nil
	}
	conf, err := libcni.ConfFromFile(file)
	if err != nil {
		return nil, fmt.Errorf("CNI configuration %s: %w", file, err)
	}
	list, err := libcni.ConfListFromConf(conf)
	if err != nil {
		return nil, fmt.Errorf("CNI configuration %s: %w", file, err)
	}
	return list, nil
}
