package sources

import (
	"errors"
	"io/fs"
	"os"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/podutil"
)

// forgetRenamedAway forgets the files that the files just read (paths) were renamed from.
//
// `mv a.yaml b.yaml` is b.yaml created, read at once, and a.yaml renamed away, read after the
// debounce (see fileChanges), in one batch of events or two. In between the source would hold
// both files and a snapshot would hold the manifest's pods twice: the same full name twice, or,
// when the manifest sets metadata.uid, the same UID twice, both reported by the merger as
// Problems although nothing is wrong. So a file holding a pod with the full name or the UID of a
// pod just read is forgotten now if it is gone. One that still exists is a real duplicate and
// is kept, for the merger to report. Only such colliding files are looked at on disk, so this
// costs one pass over the pods held, as building the snapshot does.
func (s *FileSource) forgetRenamedAway(logger klog.Logger, paths []string) {
	read := make(map[string]bool, len(paths))
	names := map[string]bool{}
	uids := map[types.UID]bool{}
	for _, path := range paths {
		read[path] = true
		if f := s.files[path]; f != nil {
			for _, pod := range f.pods {
				names[podutil.FullName(pod)] = true
				uids[pod.UID] = true
			}
		}
	}
	if len(uids) == 0 {
		return
	}
	for path, f := range s.files {
		if read[path] || !collides(f.pods, names, uids) || !gone(path) {
			continue
		}
		logger.V(4).Info("Manifest renamed away; forgetting it before the debounce", "file", path)
		delete(s.files, path) // deleting while ranging is safe
	}
}

// collides reports whether one of pods has one of names (full names) or uids.
func collides(pods []*corev1.Pod, names map[string]bool, uids map[types.UID]bool) bool {
	for _, pod := range pods {
		if uids[pod.UID] || names[podutil.FullName(pod)] {
			return true
		}
	}
	return false
}

// gone reports whether path no longer holds a manifest as read sees it: missing (symlinks
// followed) or a directory. A file that cannot be looked at for another reason is not gone,
// as read keeps such a file's pods.
func gone(path string) bool {
	info, err := os.Stat(path)
	return errors.Is(err, fs.ErrNotExist) || (err == nil && info.IsDir())
}
