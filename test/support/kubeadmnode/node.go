package kubeadmnode

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/vk-static/vk-static/test/support/hostpaths"
	"github.com/vk-static/vk-static/test/support/kubeimages"
	"github.com/vk-static/vk-static/test/support/testenv"
)

// kubeadm's fixed paths (its constants: --kubeconfig-dir and certificatesDir would move where
// it writes, not the paths inside the manifests).
const (
	KubernetesDir  = "/etc/kubernetes"
	ManifestDir    = KubernetesDir + "/manifests"
	CAFile         = KubernetesDir + "/pki/ca.crt"
	AdminConf      = KubernetesDir + "/admin.conf"
	SuperAdminConf = KubernetesDir + "/super-admin.conf"
	KubeletConf    = KubernetesDir + "/kubelet.conf"
)

// PathDir is the first directory of the process provider's default search path
// (/usr/local/sbin:/usr/local/bin:…), where kubeadm's bare command names are found.
const PathDir = "/usr/local/sbin"

// Masks are the machine's paths the namespace hides behind a tmpfs of its own: kubeadm writes
// /etc/kubernetes (certificates, kubeconfigs, manifests) and etcd /var/lib/etcd whatever it is
// told, PathDir gets the links through which the containers' bare command names resolve, and
// the agent makes the controller manager's /usr/libexec/kubernetes/… volume.
var Masks = []hostpaths.Tmpfs{
	{Path: KubernetesDir, Mode: 0o755, Size: "64m"},
	// etcd preallocates its write-ahead log in 64 MB segments; 0700 as etcd wants its data
	// directory.
	{Path: "/var/lib/etcd", Mode: 0o700, Size: "1g"},
	{Path: PathDir, Mode: 0o755, Size: "1m"},
	// The controller manager's flex-volume directory, a hostPath of type DirectoryOrCreate in
	// kubeadm's manifest: the agent would otherwise create it on the machine.
	{Path: "/usr/libexec/kubernetes", Mode: 0o755, Size: "1m"},
}

// Binaries are the programs a kubeadm node runs.
type Binaries struct {
	Kubeadm, Kubectl string
	// ControlPlane are the four commands of kubeadm's manifests, by the name they run as.
	ControlPlane kubeimages.Binaries
}

// FindBinaries locates kubeadm in kubeadm's cache, kubectl in the test control plane's, and
// the control plane's commands where kubeimages finds them; its error names the make target
// that builds what is missing.
func FindBinaries() (Binaries, error) {
	controlPlane, err := kubeimages.FindBinaries()
	if err != nil {
		return Binaries{}, err
	}
	kubeadmbin, err := kubeimages.KubeadmBinDir()
	if err != nil {
		return Binaries{}, err
	}
	testbin, err := testenv.BinDir()
	if err != nil {
		return Binaries{}, err
	}
	b := Binaries{Kubeadm: filepath.Join(kubeadmbin, "kubeadm"), Kubectl: filepath.Join(testbin, "kubectl"), ControlPlane: controlPlane}
	for p, target := range map[string]string{
		b.Kubeadm: "make kubeadm-testbin (or set VK_STATIC_KUBEADMBIN)",
		b.Kubectl: "make testbin (or set VK_STATIC_TESTBIN)",
	} {
		if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
			return Binaries{}, fmt.Errorf("%s is not an executable file (%v): run %s", p, err, target)
		}
	}
	return b, nil
}

// LinkIntoPath makes the control plane's commands resolve through the containers' search
// path: a link in PathDir for each. It refuses unless PathDir is a tmpfs (Masks), so that
// nothing is ever written into the machine's own /usr/local/sbin.
func LinkIntoPath(b Binaries) error {
	var fs unix.Statfs_t
	if err := unix.Statfs(PathDir, &fs); err != nil {
		return err
	}
	if int64(fs.Type) != int64(unix.TMPFS_MAGIC) {
		return fmt.Errorf("%s is not the namespace's tmpfs: not writing there", PathDir)
	}
	for name, target := range b.ControlPlane {
		link := filepath.Join(PathDir, name)
		_ = os.Remove(link) // linked again by a test run again (-count)
		if err := os.Symlink(target, link); err != nil {
			return err
		}
	}
	return nil
}

// Config is the whole configuration kubeadm is given: the node's name and address, which
// kubeadm would otherwise take from the hostname and the default route, the release (the
// default, stable-1, is looked up on dl.k8s.io), and a CRI socket, which the phases run here
// record but never dial. apiServerArgs become apiServer.extraArgs. Nothing else: the manifests
// are kubeadm's defaults.
func Config(node string, ip net.IP, apiServerArgs map[string]string) string {
	var extra strings.Builder
	if len(apiServerArgs) > 0 {
		extra.WriteString("apiServer:\n  extraArgs:\n")
		for _, name := range slices.Sorted(maps.Keys(apiServerArgs)) {
			fmt.Fprintf(&extra, "  - name: %s\n    value: %q\n", name, apiServerArgs[name])
		}
	}
	return fmt.Sprintf(`apiVersion: kubeadm.k8s.io/v1beta4
kind: InitConfiguration
localAPIEndpoint:
  advertiseAddress: %s
  bindPort: 6443
nodeRegistration:
  name: %s
  criSocket: unix:///var/run/containerd/containerd.sock
---
apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
kubernetesVersion: %s
%s`, ip, node, kubeimages.KubernetesVersion, extra.String())
}

// Kubeadm runs kubeadm.
type Kubeadm struct {
	Path string
	Home string // HOME: a directory of the caller's
}

// Run runs kubeadm with args and returns its standard output; its error carries kubeadm's
// output. Its environment has no *_proxy variables: kubeadm copies them into every manifest,
// and the API server would then send its webhook calls through a proxy.
func (k Kubeadm) Run(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, k.Path, args...)
	cmd.Env = []string{"HOME=" + k.Home}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasSuffix(strings.ToLower(name), "_proxy") && name != "HOME" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("kubeadm %s: %w\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String(), nil
}
