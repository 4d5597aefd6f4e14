package sources

import (
	"errors"
	"io/fs"

	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/podutil"
)

// ManifestPaths lists, sorted by name, the files the file source reads for path: every
// manifest in a directory (not recursive; dotfiles and editor leftovers skipped), or path
// itself when it is a file. A missing path has none.
func ManifestPaths(path string) ([]string, error) {
	paths, err := (&FileSource{cfg: FileConfig{Path: path}}).manifestPaths()
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return paths, err
}

// ReadManifestFile reads and decodes one manifest file exactly as the file source does (size
// limit, defaults, validation, restrictions), for `vk-static validate`.
func ReadManifestFile(path, nodeName string) ([]*corev1.Pod, error) {
	data, err := readLimited(path)
	if err != nil {
		return nil, err
	}
	return DecodeManifest(data, DecodeOptions{NodeName: nodeName, Source: podutil.FileSource, Location: path})
}
