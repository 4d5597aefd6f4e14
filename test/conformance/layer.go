package conformance

import (
	"maps"
	"os"
	"path"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/vk-static/vk-static/test/support/testimage"
)

// entry is one file, directory or symbolic link of an image's root file system.
type entry struct {
	mode     int64 // permission bits, setuid included
	dir      bool
	link     string // a symbolic link's target
	data     []byte
	uid, gid int
}

// tree is a root file system being put together: clean absolute path → entry. A later entry
// for a path replaces the earlier one, as a later layer's file would.
type tree map[string]entry

func (t tree) file(p string, mode int64, data []byte) { t[clean(p)] = entry{mode: mode, data: data} }
func (t tree) dir(p string, mode int64)               { t[clean(p)] = entry{mode: mode, dir: true} }
func (t tree) link(p, target string)                  { t[clean(p)] = entry{mode: 0o777, link: target} }

// hostFile copies a file of the machine's (symbolic links followed) into the tree at p.
func (t tree) hostFile(p, hostPath string, mode int64) error {
	data, err := os.ReadFile(hostPath)
	if err != nil {
		return err
	}
	t.file(p, mode, data)
	return nil
}

// clone is a copy of t.
func (t tree) clone() tree { return maps.Clone(t) }

func clean(p string) string { return strings.TrimPrefix(path.Clean("/"+p), "/") }

// layer writes t as one gzip-compressed layer, parents before children, with every missing
// parent directory added (0755, root). No timestamps: the same tree has the same digest.
func (t tree) layer() (v1.Layer, error) {
	all := t.clone()
	for p := range t {
		for d := path.Dir(p); d != "." && d != "/"; d = path.Dir(d) {
			if _, ok := all[d]; !ok {
				all[d] = entry{mode: 0o755, dir: true}
			}
		}
	}
	var entries []testimage.LayerEntry
	for _, p := range slices.Sorted(maps.Keys(all)) { // a parent sorts before its children
		e := all[p]
		entries = append(entries, testimage.LayerEntry{Name: p, Mode: e.mode, Dir: e.dir, Link: e.link, Data: e.data, UID: e.uid, GID: e.gid})
	}
	return testimage.Layer(entries)
}
