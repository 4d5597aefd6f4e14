package kubeimages

import (
	"archive/tar"
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/vk-static/vk-static/test/support/testenv"
	"github.com/vk-static/vk-static/test/support/testimage"
)

// KubernetesVersion is the release kubeadm, the test control plane and the Makefile's
// KUBE_VERSION are built at: kubeadm's default kubernetesVersion, and the tag of its
// control-plane images.
const KubernetesVersion = "v1.36.3"

// The references `kubeadm config images list --kubernetes-version v1.36.3` prints (kubeadm
// v1.36.3, imageRepository registry.k8s.io), which its static pods' manifests and its preflight
// name. The control-plane images are tagged with the Kubernetes version; etcd, CoreDNS and
// pause with kubeadm's constants (DefaultEtcdVersion, CoreDNSVersion, PauseVersion).
const (
	APIServer         = "registry.k8s.io/kube-apiserver:" + KubernetesVersion
	ControllerManager = "registry.k8s.io/kube-controller-manager:" + KubernetesVersion
	Scheduler         = "registry.k8s.io/kube-scheduler:" + KubernetesVersion
	Etcd              = "registry.k8s.io/etcd:3.6.8-0"
	// Pause is the sandbox image kubeadm names; built from test/support/testimage's pause,
	// the same image (same digest) as test/support/testcontainerd's SandboxImage.
	Pause = "registry.k8s.io/pause:3.10.2"
	// KubeProxy and CoreDNS are the add-ons' images: kubeadm lists them, but no static pod
	// runs them, and they are not built here. kubeadm init's preflight (ImagePull) pulls them
	// too unless the ClusterConfiguration disables the add-ons (proxy.disabled, dns.disabled)
	// or the check is skipped (--ignore-preflight-errors=ImagePull).
	KubeProxy = "registry.k8s.io/kube-proxy:" + KubernetesVersion
	CoreDNS   = "registry.k8s.io/coredns/coredns:v1.14.2"
)

// Listed returns every reference kubeadm lists, in the order it prints them.
func Listed() []string {
	return []string{APIServer, ControllerManager, Scheduler, KubeProxy, CoreDNS, Pause, Etcd}
}

// Components returns the commands of kubeadm's four static pods, each the name of its
// binary in its image, by image reference.
func Components() map[string]string {
	return map[string]string{
		APIServer:         "kube-apiserver",
		ControllerManager: "kube-controller-manager",
		Scheduler:         "kube-scheduler",
		Etcd:              "etcd",
	}
}

// BinDir is where each image's binary is: its command is its name.
const BinDir = "/usr/local/bin"

// imagePath is the upstream images' PATH (their distroless base's): kubeadm's manifests run
// bare command names ("kube-apiserver", "etcd"), which the runtime resolves through it.
const imagePath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Binaries are the host programs the images hold, by command name (Components' values).
type Binaries map[string]string

// FindBinaries locates kube-apiserver, kube-controller-manager and etcd in the test control
// plane's cache (testenv.BinDir) and kube-scheduler in kubeadm's (KubeadmBinDir), and checks
// each is a statically linked executable: the images have no C library. A missing binary is an
// error naming the make target that builds it.
func FindBinaries() (Binaries, error) {
	testbin, err := testenv.BinDir()
	if err != nil {
		return nil, err
	}
	kubeadmbin, err := KubeadmBinDir()
	if err != nil {
		return nil, err
	}
	b := Binaries{
		"kube-apiserver":          filepath.Join(testbin, "kube-apiserver"),
		"kube-controller-manager": filepath.Join(testbin, "kube-controller-manager"),
		"etcd":                    filepath.Join(testbin, "etcd"),
		"kube-scheduler":          filepath.Join(kubeadmbin, "kube-scheduler"),
	}
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(b)) { // every problem, in a stable order
		target := "make testbin (or set VK_STATIC_TESTBIN)"
		if name == "kube-scheduler" {
			target = "make kubeadm-testbin (or set VK_STATIC_KUBEADMBIN)"
		}
		if err := checkStatic(b[name]); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w: run %s", name, err, target))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return b, nil
}

// KubeadmBinDir is the directory of kubeadm and kube-scheduler: $VK_STATIC_KUBEADMBIN (the
// Makefile exports it), else the Makefile's KUBEADMBIN (testenv.ToolsCacheDir of
// test/e2ekubeadm/tools).
func KubeadmBinDir() (string, error) {
	if dir := os.Getenv("VK_STATIC_KUBEADMBIN"); dir != "" {
		return dir, nil
	}
	dir, err := testenv.ToolsCacheDir("test/e2ekubeadm/tools", "kubeadm")
	if err != nil {
		return "", fmt.Errorf("locate kubeadm's cache: %w (run make kubeadm-testbin, or set VK_STATIC_KUBEADMBIN)", err)
	}
	return dir, nil
}

// checkStatic fails unless p is an executable ELF file without a program interpreter (a
// dynamically linked program has one: the loader, which the images lack).
func checkStatic(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", p)
	}
	f, err := elf.Open(p)
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	defer f.Close()
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked", p)
		}
	}
	return nil
}

// Build returns the images kubeadm's static pods run, by reference: for each of Components one
// layer holding its binary at BinDir/<command> (with /etc and /tmp, as the upstream distroless
// base has them), its entrypoint that binary and PATH the upstream images'; and Pause. The
// upstream kube-* images' entrypoint, /go-runner, is a log redirector that kubeadm's
// manifests bypass by setting command, so it is left out. The layers are uncompressed and
// read from the binaries whenever they are read (fileLayer): Build reads each binary once, to
// hash it, and holds none of them; the binaries must stay as they are while the images are in
// use.
func Build(ctx context.Context, bins Binaries) (map[string]v1.Image, error) {
	images := map[string]v1.Image{}
	for ref, name := range Components() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		p, ok := bins[name]
		if !ok {
			return nil, fmt.Errorf("image %s: no binary for %s", ref, name)
		}
		img, err := component(name, p)
		if err != nil {
			return nil, fmt.Errorf("image %s: %w", ref, err)
		}
		images[ref] = img
	}
	pause, err := testimage.Build(testimage.Options{Cmd: []string{"pause"}})
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", Pause, err)
	}
	images[Pause] = pause
	return images, nil
}

// component is the single-layer image of one static binary.
func component(name, hostPath string) (v1.Image, error) {
	if err := checkStatic(hostPath); err != nil {
		return nil, err
	}
	layer, err := newFileLayer(hostPath, "usr/local/bin/"+name)
	if err != nil {
		return nil, err
	}
	img, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{
		OS:           "linux",
		Architecture: runtime.GOARCH,
		Config: v1.Config{
			Entrypoint: []string{BinDir + "/" + name},
			Env:        []string{imagePath},
		},
	})
	if err != nil {
		return nil, err
	}
	return mutate.AppendLayers(img, layer)
}

// fileLayer is an uncompressed layer holding one host file, read from that file each time
// the layer is read. Not testimage.Layer: it holds its content in memory, gzip-compressed,
// which for these binaries costs over a minute under the race detector (compress/flate is
// instrumented) and some 200 MB of memory; uncompressed, a layer costs one read to hash it and
// one to write it for ctr, and containerd unpacks it without decompressing.
type fileLayer struct {
	hostPath string
	size     int64  // hostPath's size when hashed; a change fails the next read
	prefix   []byte // the tar headers: the parent directories (and /etc, /tmp), then the file's
	suffix   []byte // the file's padding to a whole block, then the end-of-archive blocks
	digest   v1.Hash
}

var _ v1.Layer = (*fileLayer)(nil)

// tarBlock is the size of a tar block: a file's content is padded to a multiple of it, and an
// archive ends with two zero blocks.
const tarBlock = 512

// newFileLayer makes the layer of hostPath at name (relative to the root) with mode 0755, its
// parent directories, /etc and /tmp (which the upstream distroless base has: runtimes mount
// over /etc's files, and programs write to /tmp). Like testimage.Layer it carries no
// timestamps, so the same file makes the same digest.
func newFileLayer(hostPath, name string) (*fileLayer, error) {
	fi, err := os.Stat(hostPath)
	if err != nil {
		return nil, err
	}
	l := &fileLayer{hostPath: hostPath, size: fi.Size()}
	dirs := []string{"etc", "tmp"}
	var parents []string
	for d := path.Dir(name); d != "."; d = path.Dir(d) {
		parents = append([]string{d}, parents...)
	}
	dirs = append(dirs, parents...)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, d := range dirs {
		mode := int64(0o755)
		if d == "tmp" {
			mode = 0o1777
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: mode, Format: tar.FormatPAX}); err != nil {
			return nil, err
		}
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o755, Size: l.size, Format: tar.FormatPAX}); err != nil {
		return nil, err
	}
	// The tar.Writer is left unfinished: the content comes from the file at each read.
	l.prefix = buf.Bytes()
	l.suffix = make([]byte, (tarBlock-l.size%tarBlock)%tarBlock+2*tarBlock)
	rc, err := l.Uncompressed()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	if l.digest, _, err = v1.SHA256(rc); err != nil {
		return nil, fmt.Errorf("hash the layer of %s: %w", hostPath, err)
	}
	return l, nil
}

// Uncompressed reads the layer: headers, the file, padding and end.
func (l *fileLayer) Uncompressed() (io.ReadCloser, error) {
	f, err := os.Open(l.hostPath)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if fi.Size() != l.size {
		f.Close()
		return nil, fmt.Errorf("%s changed size (%d bytes, was %d) since its layer was made", l.hostPath, fi.Size(), l.size)
	}
	return struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(l.prefix), io.LimitReader(f, l.size), bytes.NewReader(l.suffix)), f}, nil
}

// Compressed is Uncompressed: the layer is stored as it is.
func (l *fileLayer) Compressed() (io.ReadCloser, error) { return l.Uncompressed() }

// Digest and DiffID are the same for an uncompressed layer.
func (l *fileLayer) Digest() (v1.Hash, error) { return l.digest, nil }
func (l *fileLayer) DiffID() (v1.Hash, error) { return l.digest, nil }

func (l *fileLayer) Size() (int64, error) {
	return int64(len(l.prefix)) + l.size + int64(len(l.suffix)), nil
}

func (l *fileLayer) MediaType() (types.MediaType, error) { return types.DockerUncompressedLayer, nil }

// Import imports images (Build's) into c's CRI namespace under their references, one after
// the other: a pod whose manifest names one with imagePullPolicy IfNotPresent then runs
// without a pull.
func Import(ctx context.Context, c testimage.Containerd, images map[string]v1.Image) error {
	var errs []error
	for ref, img := range images {
		if err := testimage.Import(ctx, c, ref, img); err != nil {
			errs = append(errs, err)
			if ctx.Err() != nil {
				break
			}
		}
	}
	return errors.Join(errs...)
}
