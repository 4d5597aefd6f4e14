package volume

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/vk-static/vk-static/internal/mounts"
)

// mountPoint is one line of the mount table that matters here.
type mountPoint struct {
	Path   string
	FSType string
}

const mountInfoPath = "/proc/self/mountinfo"

// mountsUnder lists the mount points at or below dir (a canonical path), deepest first so
// that unmounting in order never leaves a mount over a removed parent.
func mountsUnder(dir string) ([]mountPoint, error) {
	f, err := os.Open(mountInfoPath)
	if err != nil {
		return nil, fmt.Errorf("reading the mount table: %w", err)
	}
	defer f.Close()

	var found []mountPoint
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 64*1024), 1024*1024)
	for s.Scan() {
		mp, ok := parseMountInfoLine(s.Text())
		if ok && within(mp.Path, dir) {
			found = append(found, mp)
		}
	}
	if err := s.Err(); err != nil {
		return nil, fmt.Errorf("reading the mount table: %w", err)
	}
	sort.SliceStable(found, func(a, b int) bool {
		return strings.Count(found[a].Path, "/") > strings.Count(found[b].Path, "/")
	})
	return found, nil
}

// mountedAt returns the file system type mounted at dir, or "" when dir is not a mount point.
// With several mounts stacked on dir, the last (visible) one counts.
func mountedAt(dir string) (string, error) {
	mps, err := mountsUnder(dir)
	if err != nil {
		return "", err
	}
	fsType := ""
	for _, mp := range mps {
		if mp.Path == dir {
			fsType = mp.FSType
		}
	}
	return fsType, nil
}

// parseMountInfoLine reads "id parent major:minor root mountpoint options [optional...] -
// fstype source superoptions" (proc(5)).
func parseMountInfoLine(line string) (mountPoint, bool) {
	fields := strings.Fields(line)
	sep := -1
	for i, f := range fields {
		if f == "-" {
			sep = i
			break
		}
	}
	if len(fields) < 5 || sep < 0 || sep+1 >= len(fields) {
		return mountPoint{}, false
	}
	return mountPoint{Path: mounts.Unescape(fields[4]), FSType: fields[sep+1]}, true
}

// within reports whether path p is root or below it, by whole path elements: /srv/x is
// within /srv, /srv2 is not. Both must be clean.
func within(p, root string) bool {
	if root == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == root || strings.HasPrefix(p, root+string(filepath.Separator))
}
