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
	// In each hierarchy: the test's own directory, removed with everything below it, and the
	// parents that did not exist yet (other tests may make and use them at the same time:
	// each is removed only if it is empty by then).
	type made struct {
		own     string
		parents []string // deepest first
	}
	var dirs []made
	for _, mnt := range mounts {
		m := made{own: filepath.Join(mnt, root)}
		for dir := filepath.Dir(m.own); dir != mnt && len(dir) > len(mnt); dir = filepath.Dir(dir) {
			if _, err := os.Stat(dir); err == nil {
				break
			}
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
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		i := slices.Index(fields, "-")
		if i < 0 || i+1 >= len(fields) || len(fields) < 5 {
			continue
		}
		if fs := fields[i+1]; fs == "cgroup" || fs == "cgroup2" {
			out = append(out, fields[4])
		}
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
