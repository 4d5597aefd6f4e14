package lifecycle

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

const (
	// etcHostsPath is the hosts file, on the node and in containers.
	etcHostsPath = "/etc/hosts"
	// hostsFile is the pod's managed hosts file in its directory, the kubelet's name.
	hostsFile = "etc-hosts"
	// The kubelet's first lines, by which a user (and the e2e suite) tells its hosts files.
	managedHostsHeader                = "# Kubernetes-managed hosts file.\n"
	managedHostsHeaderWithHostNetwork = "# Kubernetes-managed hosts file (host network).\n"
)

// hostsMount is the kubelet's managed /etc/hosts for c (makeMounts, ensureHostsFile), on a
// runtime with images, whose containers have a root filesystem of their own (containerd would
// otherwise give them a copy of the node's): RootDir/pods/<uid>/etc-hosts, written afresh for
// every container created and bound at /etc/hosts. A pod on a network of its own gets
// localhost, its addresses with its hostname (its FQDN first, with spec.subdomain) and
// spec.hostAliases; a pod on the host's
// network the node's /etc/hosts and its hostAliases. None when c mounts a volume at
// /etc/hosts itself, or while a pod-network pod has no address yet (the kubelet's rule).
func (p *Provider) hostsMount(pod *corev1.Pod, c *corev1.Container, podIPs []string) (Mount, bool, error) {
	if _, ownRoot := p.rt.(ImageService); !ownRoot || (len(podIPs) == 0 && !pod.Spec.HostNetwork) {
		return Mount{}, false, nil
	}
	for _, m := range c.VolumeMounts {
		if m.MountPath == etcHostsPath {
			return Mount{}, false, nil
		}
	}
	var content []byte
	if pod.Spec.HostNetwork {
		node, err := os.ReadFile(etcHostsPath)
		if err != nil {
			return Mount{}, false, fmt.Errorf("the node's hosts file for a host-network pod: %w", err)
		}
		content = append([]byte(managedHostsHeaderWithHostNetwork), node...)
		content = append(content, hostAliasLines(pod.Spec.HostAliases)...)
	} else {
		content = managedHosts(podIPs, podHostname(pod), podDomain(pod, p.cfg.ClusterDomain), pod.Spec.HostAliases)
	}
	path := filepath.Join(p.cfg.podsDir(), string(pod.UID), hostsFile)
	// Written in place, never renamed over: the running containers' bind mounts hold the
	// file's inode, and see the new content only on that inode.
	if err := os.WriteFile(path, content, 0o644); err != nil {
		return Mount{}, false, fmt.Errorf("the pod's hosts file: %w", err)
	}
	if err := os.Chmod(path, 0o644); err != nil { // past the umask
		return Mount{}, false, fmt.Errorf("the pod's hosts file: %w", err)
	}
	return Mount{HostPath: path, ContainerPath: etcHostsPath}, true, nil
}

// managedHosts is the kubelet's hosts file of a pod on a network of its own
// (managedHostsFileContent).
func managedHosts(podIPs []string, hostname, domain string, aliases []corev1.HostAlias) []byte {
	var b bytes.Buffer
	b.WriteString(managedHostsHeader)
	b.WriteString("127.0.0.1\tlocalhost\n")
	b.WriteString("::1\tlocalhost ip6-localhost ip6-loopback\n")
	b.WriteString("fe00::0\tip6-localnet\n")
	b.WriteString("fe00::0\tip6-mcastprefix\n")
	b.WriteString("fe00::1\tip6-allnodes\n")
	b.WriteString("fe00::2\tip6-allrouters\n")
	for _, ip := range podIPs {
		if domain != "" {
			fmt.Fprintf(&b, "%s\t%s.%s\t%s\n", ip, hostname, domain, hostname)
		} else {
			fmt.Fprintf(&b, "%s\t%s\n", ip, hostname)
		}
	}
	b.Write(hostAliasLines(aliases))
	return b.Bytes()
}

// hostAliasLines are spec.hostAliases as the kubelet writes them: a line per address, its
// names separated by tabs, after a blank line and a comment.
func hostAliasLines(aliases []corev1.HostAlias) []byte {
	if len(aliases) == 0 {
		return nil
	}
	var b bytes.Buffer
	b.WriteString("\n# Entries added by HostAliases.\n")
	for _, a := range aliases {
		fmt.Fprintf(&b, "%s\t%s\n", a.IP, strings.Join(a.Hostnames, "\t"))
	}
	return b.Bytes()
}
