package testcontainerd

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ErrNotInstalled is wrapped by Start's error when containerd, its shim, ctr, runc or (with
// Options.LoopbackCNI) the loopback CNI plugin is missing. Tests fail on it, never skip:
// `make testbin` installs them.
var ErrNotInstalled = errors.New("containerd, runc or the CNI plugins not installed: run `make testbin` (as root it installs the packages containerd, runc and containernetworking-plugins with apt-get)")

// sbinDirs are searched after PATH: runc is in /usr/sbin on Debian, which a user's PATH may
// lack.
var sbinDirs = []string{"/usr/local/sbin", "/usr/sbin", "/sbin"}

// loopbackPlugins are where distributions put the loopback CNI plugin: Debian's
// containernetworking-plugins, and the upstream release's layout.
var loopbackPlugins = []string{"/usr/lib/cni/loopback", "/opt/cni/bin/loopback"}

// binaries are the programs an instance runs.
type binaries struct {
	containerd, ctr, runc string
	loopback              string // empty unless Options.LoopbackCNI
	path                  string // containerd's PATH: it runs the shim, the shim runs runc
}

func findBinaries(loopbackCNI bool) (binaries, error) {
	var b binaries
	dirs := append(filepath.SplitList(os.Getenv("PATH")), sbinDirs...)
	var missing []string
	find := func(name string) string {
		for _, d := range dirs {
			p := filepath.Join(d, name)
			if _, err := exec.LookPath(p); err == nil {
				return p
			}
		}
		missing = append(missing, name)
		return ""
	}
	b.containerd = find("containerd")
	b.ctr = find("ctr")
	b.runc = find("runc")
	find("containerd-shim-runc-v2")
	if loopbackCNI {
		for _, p := range loopbackPlugins {
			if _, err := exec.LookPath(p); err == nil {
				b.loopback = p
				break
			}
		}
		if b.loopback == "" {
			missing = append(missing, "the loopback CNI plugin ("+strings.Join(loopbackPlugins, " or ")+")")
		}
	}
	if len(missing) > 0 {
		return b, fmt.Errorf("%w: missing %s", ErrNotInstalled, strings.Join(missing, ", "))
	}
	b.path = strings.Join(dirs, string(os.PathListSeparator))
	return b, nil
}
