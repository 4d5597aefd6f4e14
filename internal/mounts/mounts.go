package mounts

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// UnmountUnder detaches every mount at or below dir, deepest first (umount -l).
func UnmountUnder(dir string) error {
	points, err := Under(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, m := range points {
		if err := unix.Unmount(m, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
			errs = append(errs, fmt.Errorf("unmount %s: %w", m, err))
		}
	}
	return errors.Join(errs...)
}

// Under lists the mount points at or below dir from /proc/self/mountinfo, deepest first; a
// path mounted more than once is listed once per mount, each of which needs its own detach.
func Under(dir string) ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return under(f, dir)
}

// under is Under on mountinfo's text (proc(5): "id parent major:minor root mount-point
// options … - type source super-options").
func under(mountinfo io.Reader, dir string) ([]string, error) {
	dir = filepath.Clean(dir)
	below := dir + "/"
	if dir == "/" {
		below = dir // every mount point is below the root
	}
	var points []string
	s := bufio.NewScanner(mountinfo)
	s.Buffer(make([]byte, 64<<10), 1<<20)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) < 5 {
			continue
		}
		m := Unescape(fields[4])
		if m == dir || strings.HasPrefix(m, below) {
			points = append(points, m)
		}
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	// Deeper first; at one depth the later mount first, as it hides the earlier.
	slices.Reverse(points)
	slices.SortStableFunc(points, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	return points, nil
}
