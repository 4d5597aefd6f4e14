package lifecycle

import (
	"bufio"
	"os"
	"strings"

	corev1 "k8s.io/api/core/v1"

	agentversion "github.com/vk-static/vk-static/internal/version"
)

// ConfigureNode fills the Node's nodeInfo from the machine, as the kubelet's MachineInfo and
// VersionInfo setters do: kernel version, OS image (os-release's PRETTY_NAME), machine ID,
// system UUID, boot ID and the container runtime's version; the kubelet version and the
// operating system are the caller's. NewProvider calls it on the Node the agent gives it
// (agent.ProviderConfig.Node). What cannot be read is left as it is.
func (p *Provider) ConfigureNode(n *corev1.Node) {
	info := &n.Status.NodeInfo
	set := func(field *string, value string) {
		if value != "" {
			*field = value
		}
	}
	set(&info.KernelVersion, readTrimmed("/proc/sys/kernel/osrelease"))
	set(&info.OSImage, osImage("/etc/os-release"))
	set(&info.MachineID, readTrimmed("/etc/machine-id"))
	set(&info.SystemUUID, readTrimmed("/sys/class/dmi/id/product_uuid"))
	set(&info.BootID, readTrimmed("/proc/sys/kernel/random/boot_id"))
	if v, ok := p.rt.(RuntimeVersion); ok && v.Name() != "" {
		info.ContainerRuntimeVersion = v.Name() + "://" + v.Version()
	} else {
		// A runtime without a version of its own is the agent's.
		info.ContainerRuntimeVersion = p.cfg.RuntimeName + "://" + agentversion.Version
	}
}

func readTrimmed(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}

// osImage is os-release's PRETTY_NAME, as the kubelet's cadvisor reports it ("Debian GNU/Linux
// 12 (bookworm)"); "" when there is none.
func osImage(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "PRETTY_NAME="); ok {
			return strings.Trim(v, `"'`)
		}
	}
	return ""
}
