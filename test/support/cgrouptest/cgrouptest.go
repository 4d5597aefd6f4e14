// Package cgrouptest gives tests a cgroup root (--cgroup-root) of their own, below the test
// process's own cgroup, and removes it afterwards.
package cgrouptest

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Root returns a fresh cgroup path for the test's pods, below the test process's own memory
// cgroup (v1) or its cgroup (v2) — so that the test's containers stay accounted and limited
// where the test itself is, not moved out to the hierarchy's root — and removes, when the test
// ends, every cgroup directory below it and each parent directory it made in any hierarchy. It
// skips the test when cgroups cannot be used (not root, none mounted).
func Root(t testing.TB) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: makes cgroups")
	}
	own, mounts := ownCgroup(), Mounts()
	if len(mounts) == 0 {
		t.Skip("no cgroup hierarchy mounted")
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

// Mounts are the mount points of the cgroup hierarchies (v1 controllers, named hierarchies
// and v2).
func Mounts() []string {
	var out []string
	for _, h := range hierarchies() {
		out = append(out, h.mount)
	}
	return out
}

// hierarchy is a mounted cgroup hierarchy and the test process's cgroup in it.
type hierarchy struct {
	mount, self string
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
			}
		case "cgroup":
			for _, opt := range strings.Split(fields[i+3], ",") {
				if p, ok := self[opt]; ok && opt != "" {
					h.self = p
				}
			}
		default:
			continue
		}
		out = append(out, h)
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

// ownCgroup is the process's cgroup in the memory hierarchy (v1), else in v2's.
func ownCgroup() string {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "/"
	}
	unified := "/"
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			if c == "memory" {
				return parts[2]
			}
		}
		if parts[0] == "0" && parts[1] == "" {
			unified = parts[2]
		}
	}
	return unified
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
