package testimage

import (
	"fmt"
	"maps"
	"path"
	"runtime"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// Entrypoint is the path of the workload program in every image.
const Entrypoint = "/workload"

// MarkerPath is a file in every image and on no host: `workload cat /etc/vk-image` shows
// whether a command ran in the container's filesystem.
const MarkerPath = "/etc/vk-image"

// DefaultMarker is MarkerPath's content unless Options.Marker is set.
const DefaultMarker = "vk-static test image\n"

// Options describe an image; the zero value is a pause image (Cmd ["pause"]).
type Options struct {
	// Cmd are the default arguments of /workload, e.g. {"serve", "--port", "8080"}; empty:
	// {"pause"}.
	Cmd []string
	// Env is added to the image's environment, "NAME=value" each; PATH is set already (it
	// finds the program as "workload" too).
	Env []string
	// Labels are the image configuration's labels.
	Labels map[string]string
	// Marker is MarkerPath's content; empty: DefaultMarker. A distinct marker makes a distinct
	// image with the same Cmd.
	Marker string
	// Files are added to the image: absolute path → content, mode 0644.
	Files map[string]string
	// User is the image's user (uid, uid:gid or a name); empty: root.
	User string
}

// Build returns an image of the workload program for the test's os/arch (compiling the
// program on the first call of the process).
func Build(opts Options) (v1.Image, error) {
	program, err := workloadLayer()
	if err != nil {
		return nil, err
	}
	extra, err := extraLayer(opts)
	if err != nil {
		return nil, err
	}
	cmd := opts.Cmd
	if len(cmd) == 0 {
		cmd = []string{"pause"}
	}
	img, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{
		OS:           "linux",
		Architecture: runtime.GOARCH,
		Config: v1.Config{
			Entrypoint: []string{Entrypoint},
			Cmd:        cmd,
			Env:        append([]string{"PATH=/usr/local/bin:/usr/bin:/bin:/"}, opts.Env...),
			Labels:     opts.Labels,
			User:       opts.User,
		},
	})
	if err != nil {
		return nil, err
	}
	return mutate.AppendLayers(img, program, extra)
}

// extraLayer holds the marker, Options.Files and the directories a container's runtime mounts
// over (/etc's files, /tmp).
func extraLayer(opts Options) (v1.Layer, error) {
	marker := opts.Marker
	if marker == "" {
		marker = DefaultMarker
	}
	files := map[string]string{MarkerPath: marker}
	for p, content := range opts.Files {
		if !path.IsAbs(p) || path.Clean(p) != p {
			return nil, fmt.Errorf("image file %q: not a clean absolute path", p)
		}
		files[p] = content
	}
	dirs := map[string]bool{"etc": true, "tmp": true}
	var entries []LayerEntry
	for _, p := range slices.Sorted(maps.Keys(files)) {
		name := strings.TrimPrefix(p, "/")
		for d := path.Dir(name); d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
		entries = append(entries, LayerEntry{Name: name, Mode: 0o644, Data: []byte(files[p])})
	}
	var dirEntries []LayerEntry
	for _, d := range slices.Sorted(maps.Keys(dirs)) { // parents sort before their children
		mode := int64(0o755)
		if d == "tmp" {
			mode = 0o1777
		}
		dirEntries = append(dirEntries, LayerEntry{Name: d, Mode: mode, Dir: true})
	}
	return Layer(append(dirEntries, entries...))
}
