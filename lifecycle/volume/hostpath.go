package volume

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/podutil"
)

// setupHostPath checks the hostPath volume i of pod against the allowed prefixes and its
// type, and returns the path with its symlinks resolved: the path that was checked is the
// path that gets mounted, even if a link along the way changes later.
func (m *Manager) setupHostPath(pod *corev1.Pod, i int) (string, error) {
	src := pod.Spec.Volumes[i].HostPath
	field := fmt.Sprintf("spec.volumes[%d].hostPath", i)
	if src.Path == "" || !filepath.IsAbs(src.Path) {
		return "", refuse(field+".path", src.Path, "must be an absolute path")
	}
	clean := filepath.Clean(src.Path)
	resolved, err := resolveExisting(clean)
	if err != nil {
		return "", fmt.Errorf("%s.path %q: resolving symlinks: %w", field, src.Path, err)
	}
	if !m.hostPathTrusted(pod) && !m.hostPathAllowed(resolved) {
		return "", m.hostPathRefusal(pod, field+".path", src.Path, resolved)
	}
	if err := checkHostPathType(resolved, src.Type, field); err != nil {
		return "", err
	}
	return resolved, nil
}

func (m *Manager) hostPathAllowed(resolved string) bool {
	for _, prefix := range m.allowedHosts {
		// An allowed prefix may itself be a link (/var/run -> /run); compare like with like.
		rp, err := resolveExisting(prefix)
		if err != nil {
			rp = prefix
		}
		if within(resolved, rp) {
			return true
		}
	}
	return false
}

// hostPathTrusted reports whether pod may use any host path: a static pod, whose manifest is
// the node administrator's, unless the manager holds static pods to the allowed prefixes.
func (m *Manager) hostPathTrusted(pod *corev1.Pod) bool {
	return !m.restrictStatic && podutil.IsStaticPod(pod)
}

func (m *Manager) hostPathRefusal(pod *corev1.Pod, field, path, resolved string) *FieldError {
	via := ""
	if resolved != path {
		via = fmt.Sprintf(" (resolves to %q)", resolved)
	}
	// Which rules the pod is held to, so that the operator knows which flag decides.
	whose := "an API pod's"
	if podutil.IsStaticPod(pod) {
		whose = "a static pod's (held to the API pods' rules"
		if m.restrictStaticFlag != "" {
			whose += " by " + m.restrictStaticFlag
		}
		whose += ")"
	}
	if len(m.allowedHosts) == 0 {
		return refuse(field, path, "%s hostPath volumes are not allowed on this node%s: %s names no allowed prefix", whose, via, m.hostPathFlag)
	}
	return refuse(field, path, "%s hostPath is not under %s%s (allowed: %s)", whose, m.hostPathFlag, via, strings.Join(m.allowedHosts, ", "))
}

// resolveExisting resolves the symlinks of the longest existing leading part of the clean
// absolute path p and appends the rest: a DirectoryOrCreate path that does not exist yet is
// judged by where it will be created. A dangling symlink on the way is an error: the path
// would lead wherever its target is created later.
func resolveExisting(p string) (string, error) {
	var rest []string
	cur := p
	for {
		r, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(append([]string{r}, rest...)...), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		if _, lerr := os.Lstat(cur); lerr == nil {
			// cur exists but does not resolve: a link to nothing. Where it leads is not
			// known until its target appears, so it cannot be judged now.
			target, _ := os.Readlink(cur)
			return "", fmt.Errorf("%s is a symlink to %q, which does not exist", cur, target)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p, nil
		}
		rest = append([]string{filepath.Base(cur)}, rest...)
		cur = parent
	}
}

// checkHostPathType is the kubelet's hostPath type check: the *OrCreate types create what is
// missing (a 0755 directory with its parents, an empty 0644 file in an existing directory),
// the others only check. An unset type checks nothing. A failed check is not a refusal: the
// path may appear later, so the kubelet retries.
func checkHostPathType(p string, t *corev1.HostPathType, field string) error {
	if t == nil {
		return nil
	}
	typeField := field + ".type"
	info, statErr := os.Stat(p)
	exists := statErr == nil
	if statErr != nil && !errors.Is(statErr, fs.ErrNotExist) {
		return fmt.Errorf("%s %q: %w", typeField, *t, statErr)
	}
	notA := func(what string) error {
		return fmt.Errorf("%s %s: hostPath type check failed: %s is not %s", typeField, *t, p, what)
	}
	switch *t {
	case corev1.HostPathUnset:
		return nil
	case corev1.HostPathDirectoryOrCreate:
		if !exists {
			if err := os.MkdirAll(p, 0o755); err != nil {
				return fmt.Errorf("%s %s: creating %s: %w", typeField, *t, p, err)
			}
			// MkdirAll's mode passes through the umask; the kubelet's directory is 0755.
			if err := os.Chmod(p, 0o755); err != nil {
				return fmt.Errorf("%s %s: %w", typeField, *t, err)
			}
			return nil
		}
		if !info.IsDir() {
			return notA("a directory")
		}
	case corev1.HostPathDirectory:
		if !exists || !info.IsDir() {
			return notA("a directory")
		}
	case corev1.HostPathFileOrCreate:
		if !exists {
			f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
			if err != nil && !errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("%s %s: creating %s: %w", typeField, *t, p, err)
			}
			if err == nil {
				_ = f.Close()
				if err := os.Chmod(p, 0o644); err != nil {
					return fmt.Errorf("%s %s: %w", typeField, *t, err)
				}
			}
			return nil
		}
		if !info.Mode().IsRegular() {
			return notA("a file")
		}
	case corev1.HostPathFile:
		if !exists || !info.Mode().IsRegular() {
			return notA("a file")
		}
	case corev1.HostPathSocket:
		if !exists || info.Mode()&fs.ModeSocket == 0 {
			return notA("a socket file")
		}
	case corev1.HostPathCharDev:
		if !exists || info.Mode()&fs.ModeCharDevice == 0 || info.Mode()&fs.ModeDevice == 0 {
			return notA("a character device")
		}
	case corev1.HostPathBlockDev:
		if !exists || info.Mode()&fs.ModeDevice == 0 || info.Mode()&fs.ModeCharDevice != 0 {
			return notA("a block device")
		}
	default:
		return refuse(typeField, string(*t),
			"unknown hostPath type (known: \"\", DirectoryOrCreate, Directory, FileOrCreate, File, Socket, CharDevice, BlockDevice)")
	}
	return nil
}
