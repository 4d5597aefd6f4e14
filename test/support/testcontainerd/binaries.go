package testcontainerd

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/vk-static/vk-static/test/support/cnitest"
)

// ErrNotInstalled is wrapped by Start's error when containerd, its shim, ctr, runc or the CNI
// plugins of Options.LoopbackCNI or Options.Bridge are missing. Tests fail on it, never skip:
// `make testbin` installs them.
var ErrNotInstalled = errors.New("containerd, runc or the CNI plugins not installed: run `make testbin` (as root it installs the packages containerd, runc and containernetworking-plugins with apt-get)")

// sbinDirs are searched after PATH: runc is in /usr/sbin on Debian, which a user's PATH may
// lack.
var sbinDirs = []string{"/usr/local/sbin", "/usr/sbin", "/sbin"}

// binaries are the programs an instance runs.
type binaries struct {
	containerd, ctr, runc string
	// cniDir holds every plugin of cniPlugins; both are empty without a CNI network.
	cniDir     string
	cniPlugins []string
	path       string // containerd's PATH: it runs the shim, the shim runs runc
}

// findBinaries finds containerd, its shim, ctr, runc and the directory holding every CNI
// plugin named.
func findBinaries(plugins []string) (binaries, error) {
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
	if len(plugins) > 0 {
		for _, d := range cnitest.PluginDirs {
			if hasAll(d, plugins) {
				b.cniDir, b.cniPlugins = d, plugins
				break
			}
		}
		if b.cniDir == "" {
			missing = append(missing, "the CNI plugins "+strings.Join(plugins, ", ")+" (in "+strings.Join(cnitest.PluginDirs, " or ")+")")
		}
	}
	if len(missing) > 0 {
		return b, fmt.Errorf("%w: missing %s", ErrNotInstalled, strings.Join(missing, ", "))
	}
	b.path = strings.Join(dirs, string(os.PathListSeparator))
	return b, nil
}

// hasAll reports whether every named program is an executable in dir.
func hasAll(dir string, names []string) bool {
	for _, n := range names {
		if _, err := exec.LookPath(filepath.Join(dir, n)); err != nil {
			return false
		}
	}
	return true
}
