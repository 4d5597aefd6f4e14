// Package cgrouptest gives tests a cgroup root (--cgroup-root) of their own, beside the test
// process's own cgroup, and removes it afterwards; the same tests then run on cgroup v1 and v2.
//
// On cgroup v2 a cgroup that holds processes may not have children with domain controllers
// (the no-internal-processes rule), so Root first empties the test process's cgroup: every
// process in it moves into a leaf below it (Leaf), whose siblings the tests' roots are — as an
// agent under systemd runs in a delegated subtree (Delegate=yes) beside the cgroups it makes.
// The move is made once, and kept: the processes stay in the leaf, as charged and limited as
// they were, since it is below their cgroup.
package cgrouptest

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Leaf is the name of the cgroup v2 leaf the test processes move into (see the package
// documentation). A test process already in a cgroup of this name, moved there by another test
// binary, takes its parent as its own.
const Leaf = "vk-static-tests"

// Root returns a fresh cgroup path for the test's pods, below the test process's own memory
// cgroup (v1) or its cgroup, once emptied into its Leaf (v2) — so that the test's containers stay
// accounted and limited where the test itself is, not moved out to the hierarchy's root — and
// removes, when the test ends, every cgroup directory below it and each parent directory it
// made in any hierarchy. It skips the test when cgroups cannot be used (not root, none
// mounted), and fails it when the v2 cgroup cannot be emptied.
func Root(t testing.TB) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: makes cgroups")
	}
	if len(Mounts()) == 0 {
		t.Skip("no cgroup hierarchy mounted")
	}
	own, err := ownCgroup()
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	_, _ = rand.Read(buf)
	root := path.Join(own, "vk-static-test-"+hex.EncodeToString(buf))
	// In each hierarchy: the test's own directory, removed with everything below it, and its
	// parents below the test process's own cgroup in that hierarchy — made for the test where
	// they were missing (the memory cgroup's path in the cpu hierarchy, say) — each removed
	// only if empty by then: parallel tests make and use the same parents.
	type made struct {
		own     string
		parents []string // deepest first
	}
	var dirs []made
	for _, h := range hierarchies() {
		m := made{own: filepath.Join(h.mount, root)}
		stop := filepath.Join(h.mount, h.self)
		for dir := filepath.Dir(m.own); dir != stop && len(dir) > len(stop); dir = filepath.Dir(dir) {
			m.parents = append(m.parents, dir)
		}
		dirs = append(dirs, m)
	}
	t.Cleanup(func() {
		for _, m := range dirs {
			// Processes killed as the test ended may still be leaving (EBUSY): poll a while.
			deadline := time.Now().Add(10 * time.Second)
			err := removeTree(m.own)
			for err != nil && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
				err = removeTree(m.own)
			}
			if err != nil {
				t.Errorf("cgroup %s left behind: %v", m.own, err)
			}
			for _, p := range m.parents {
				_ = os.Remove(p) // in use by another test: its cleanup removes it
			}
		}
	})
	return root
}

// Dirs makes the cgroup p (a path Root returned, or one below it) ready for processes, and
// returns its directories as the process runtime records a cgroup's: by controller, each of
// controllers in its v1 hierarchy, or the one v2 directory under "". Root's cleanup removes
// them.
func Dirs(t testing.TB, p string, controllers ...string) map[string]string {
	t.Helper()
	dirs := map[string]string{}
	if unified() {
		dirs[""] = filepath.Join(unifiedMount, p)
	} else {
		for _, h := range hierarchies() {
			for _, c := range h.controllers {
				if slices.Contains(controllers, c) {
					dirs[c] = filepath.Join(h.mount, p)
				}
			}
		}
		if len(dirs) < len(controllers) {
			t.Skipf("not every one of the cgroup v1 controllers %v is mounted", controllers)
		}
	}
	for _, dir := range dirs {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dirs
}

// Mounts are the mount points of the cgroup hierarchies (v1 controllers, named hierarchies
// and v2).
func Mounts() []string {
	var out []string
	for _, h := range hierarchies() {
		out = append(out, h.mount)
	}
	return out
}

// Exists reports whether the cgroup path p has a directory in any hierarchy.
func Exists(p string) bool {
	for _, mnt := range Mounts() {
		if _, err := os.Stat(filepath.Join(mnt, p)); err == nil {
			return true
		}
	}
	return false
}

// unifiedMount is where a host in cgroup v2's unified mode mounts its one hierarchy.
const unifiedMount = "/sys/fs/cgroup"

// unified reports whether the host is in cgroup v2's unified mode (not v1's, nor the hybrid
// with an empty v2 hierarchy beside v1's), as the cgroup library decides.
func unified() bool {
	var st unix.Statfs_t
	return unix.Statfs(unifiedMount, &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC
}

// hierarchy is a mounted cgroup hierarchy, its controllers (none for v2's), and the test
// process's cgroup in it: on v2 the parent of the Leaf it was moved to.
type hierarchy struct {
	mount, self string
	controllers []string
}

// hierarchies pairs each mount (its controllers from the mount's options) with the line of
// /proc/self/cgroup that names the same controllers.
func hierarchies() []hierarchy {
	self := map[string]string{} // controller (or "" for v2) -> the process's cgroup
	if data, err := os.ReadFile("/proc/self/cgroup"); err == nil {
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if parts := strings.SplitN(line, ":", 3); len(parts) == 3 {
				for _, c := range strings.Split(parts[1], ",") {
					self[c] = parts[2]
				}
			}
		}
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []hierarchy
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		i := slices.Index(fields, "-")
		if i < 0 || i+3 >= len(fields) || len(fields) < 5 {
			continue
		}
		h := hierarchy{mount: fields[4], self: "/"}
		switch fields[i+1] {
		case "cgroup2":
			if p, ok := self[""]; ok {
				h.self = p
				if path.Base(p) == Leaf {
					h.self = path.Dir(p)
				}
			}
		case "cgroup":
			for _, opt := range strings.Split(fields[i+3], ",") {
				if p, ok := self[opt]; ok && opt != "" {
					h.self = p
					h.controllers = append(h.controllers, opt)
				}
			}
		default:
			continue
		}
		out = append(out, h)
	}
	return out
}

// ownCgroup is the process's cgroup in the memory hierarchy (v1), else, once emptied, in v2's
// (emptyOwnCgroup).
func ownCgroup() (string, error) {
	if unified() {
		once.Do(func() { emptied, emptyErr = emptyOwnCgroup() })
		return emptied, emptyErr
	}
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "/", nil
	}
	unifiedPath := "/"
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			if c == "memory" {
				return parts[2], nil
			}
		}
		if parts[0] == "0" && parts[1] == "" {
			unifiedPath = parts[2]
		}
	}
	return unifiedPath, nil
}

var (
	once     sync.Once
	emptied  string
	emptyErr error
)

// emptyOwnCgroup moves every process of the test process's v2 cgroup into its Leaf and
// enables every controller it has for its children, then returns it. The hierarchy's root
// cgroup is exempt from the rule (and holds kernel threads, which cannot move): there only the
// controllers are enabled. A test process already in a Leaf (another test binary moved it, or
// its parent) has the Leaf's parent for its cgroup.
func emptyOwnCgroup() (string, error) {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	own := ""
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			own = p
		}
	}
	if own == "" {
		return "", errors.New("cgrouptest: no cgroup v2 line in /proc/self/cgroup")
	}
	if path.Base(own) == Leaf {
		own = path.Dir(own)
	}
	dir := filepath.Join(unifiedMount, own)
	if _, err := os.Stat(filepath.Join(dir, "cgroup.type")); err == nil {
		if err := moveAll(dir, filepath.Join(dir, Leaf)); err != nil {
			return "", err
		}
	}
	controllers, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	if err != nil {
		return "", err
	}
	// One at a time, and as the cgroup library does, whatever fails: a controller the host
	// keeps for itself is missed by the tests that need it, which say so.
	for _, c := range strings.Fields(string(controllers)) {
		_ = os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("+"+c), 0)
	}
	return own, nil
}

// moveAll moves every process of the cgroup dir into leaf, until none is left (a process may
// fork while the others move).
func moveAll(dir, leaf string) error {
	if err := os.Mkdir(leaf, 0o755); err != nil && !errors.Is(err, iofs.ErrExist) {
		return fmt.Errorf("cgrouptest: %w", err)
	}
	for range 100 {
		data, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		if err != nil {
			return fmt.Errorf("cgrouptest: %w", err)
		}
		pids := strings.Fields(string(data))
		if len(pids) == 0 {
			return nil
		}
		for _, pid := range pids {
			if _, err := strconv.Atoi(pid); err != nil {
				continue
			}
			err := os.WriteFile(filepath.Join(leaf, "cgroup.procs"), []byte(pid), 0)
			if err != nil && !errors.Is(err, syscall.ESRCH) { // ended meanwhile
				return fmt.Errorf("cgrouptest: move process %s from %s into %s: %w", pid, dir, leaf, err)
			}
		}
	}
	return fmt.Errorf("cgrouptest: processes keep appearing in %s", dir)
}

// removeTree removes a cgroup directory and those below it, deepest first (cgroup directories
// are removed with rmdir, their files go with them).
func removeTree(dir string) error {
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() {
			if err := removeTree(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return os.Remove(dir)
}
