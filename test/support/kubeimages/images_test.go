package kubeimages_test

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	criclient "k8s.io/cri-client/pkg"

	"github.com/vk-static/vk-static/test/support/kubeimages"
	"github.com/vk-static/vk-static/test/support/testcontainerd"
	"github.com/vk-static/vk-static/test/support/testimage"
)

var cd *testcontainerd.Containerd

func TestMain(m *testing.M) { os.Exit(testcontainerd.Main(m, &cd)) }

// TestReferencesAreKubeadms checks the constants against what kubeadm itself says: the
// references it lists for the release are the ones its manifests and preflight name.
func TestReferencesAreKubeadms(t *testing.T) {
	dir, err := kubeimages.KubeadmBinDir()
	require.NoError(t, err)
	kubeadm := filepath.Join(dir, "kubeadm")
	_, err = os.Stat(kubeadm)
	require.NoError(t, err, "run make kubeadm-testbin (or set VK_STATIC_KUBEADMBIN)")
	out, err := exec.Command(kubeadm, "config", "images", "list", "--kubernetes-version", kubeimages.KubernetesVersion).Output()
	require.NoError(t, err)
	assert.Equal(t, kubeimages.Listed(), strings.Fields(string(out)))

	components := kubeimages.Components()
	assert.Len(t, components, 4)
	for ref := range components {
		assert.Contains(t, kubeimages.Listed(), ref)
	}
}

// staticProgram is a small statically linked program (test/support/testimage's workload), a
// stand-in for the control plane's binaries.
func staticProgram(t *testing.T) string {
	t.Helper()
	bin, err := testimage.BuildWorkload(t.TempDir())
	require.NoError(t, err)
	return bin
}

func TestMissingBinariesNameTheirMakeTarget(t *testing.T) {
	program := staticProgram(t)
	testbin := t.TempDir()
	for _, name := range []string{"kube-apiserver", "etcd"} {
		require.NoError(t, os.Symlink(program, filepath.Join(testbin, name)))
	}
	t.Setenv("VK_STATIC_TESTBIN", testbin)
	t.Setenv("VK_STATIC_KUBEADMBIN", t.TempDir())
	_, err := kubeimages.FindBinaries()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "kube-controller-manager: ")
	assert.Contains(t, err.Error(), "run make testbin")
	assert.Contains(t, err.Error(), "kube-scheduler: ")
	assert.Contains(t, err.Error(), "run make kubeadm-testbin")
	assert.NotContains(t, err.Error(), "kube-apiserver")

	require.NoError(t, os.Symlink(program, filepath.Join(testbin, "kube-controller-manager")))
	kubeadmbin := t.TempDir()
	require.NoError(t, os.Symlink(program, filepath.Join(kubeadmbin, "kube-scheduler")))
	t.Setenv("VK_STATIC_KUBEADMBIN", kubeadmbin)
	bins, err := kubeimages.FindBinaries()
	require.NoError(t, err)
	assert.Equal(t, kubeimages.Binaries{
		"kube-apiserver":          filepath.Join(testbin, "kube-apiserver"),
		"kube-controller-manager": filepath.Join(testbin, "kube-controller-manager"),
		"etcd":                    filepath.Join(testbin, "etcd"),
		"kube-scheduler":          filepath.Join(kubeadmbin, "kube-scheduler"),
	}, bins)
}

// standIns are Binaries with program for every component.
func standIns(program string) kubeimages.Binaries {
	b := kubeimages.Binaries{}
	for _, name := range kubeimages.Components() {
		b[name] = program
	}
	return b
}

func TestDynamicBinaryIsRefused(t *testing.T) {
	bins := standIns(staticProgram(t))
	dynamic, err := exec.LookPath("true") // the distribution's, linked against its C library
	require.NoError(t, err)
	bins["kube-apiserver"] = dynamic
	_, err = kubeimages.Build(context.Background(), bins)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "dynamically linked")
	assert.Contains(t, err.Error(), kubeimages.APIServer)
}

// TestImageHoldsItsBinary reads the images back without a runtime: the binary at
// /usr/local/bin/<command> in one uncompressed layer, the same file the same digest, a binary
// that changed refused rather than read short.
func TestImageHoldsItsBinary(t *testing.T) {
	program := staticProgram(t)
	want, err := os.ReadFile(program)
	require.NoError(t, err)
	images, err := kubeimages.Build(context.Background(), standIns(program))
	require.NoError(t, err)
	for ref, name := range kubeimages.Components() {
		cfg, err := images[ref].ConfigFile()
		require.NoError(t, err)
		assert.Equal(t, []string{kubeimages.BinDir + "/" + name}, cfg.Config.Entrypoint, ref)
		assert.Contains(t, cfg.Config.Env, "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", ref)
		assert.Equal(t, "linux", cfg.OS)

		layers, err := images[ref].Layers()
		require.NoError(t, err)
		require.Len(t, layers, 1, ref)
		layer := layers[0]
		mt, err := layer.MediaType()
		require.NoError(t, err)
		assert.Equal(t, types.DockerUncompressedLayer, mt)
		digest, err := layer.Digest()
		require.NoError(t, err)
		diffID, err := layer.DiffID()
		require.NoError(t, err)
		assert.Equal(t, digest, diffID, "uncompressed")

		rc, err := layer.Uncompressed()
		require.NoError(t, err)
		data, err := io.ReadAll(rc)
		require.NoError(t, rc.Close())
		require.NoError(t, err)
		size, err := layer.Size()
		require.NoError(t, err)
		assert.Equal(t, int64(len(data)), size)
		sum := sha256.Sum256(data)
		assert.Equal(t, digest.Hex, hex.EncodeToString(sum[:]))

		modes := map[string]int64{}
		var content []byte
		tr := tar.NewReader(bytes.NewReader(data))
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err)
			modes[h.Name] = h.Mode
			if h.Name == "usr/local/bin/"+name {
				content, err = io.ReadAll(tr)
				require.NoError(t, err)
			}
		}
		assert.Equal(t, map[string]int64{
			"etc/": 0o755, "tmp/": 0o1777, "usr/": 0o755, "usr/local/": 0o755, "usr/local/bin/": 0o755,
			"usr/local/bin/" + name: 0o755,
		}, modes, ref)
		assert.True(t, bytes.Equal(want, content), "%s: the binary's content", ref)
	}

	again, err := kubeimages.Build(context.Background(), standIns(program))
	require.NoError(t, err)
	for ref := range images {
		d1, err := images[ref].Digest()
		require.NoError(t, err)
		d2, err := again[ref].Digest()
		require.NoError(t, err)
		assert.Equal(t, d1, d2, "%s: the same binary makes the same image", ref)
	}

	f, err := os.OpenFile(program, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.Write([]byte("more"))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	layers, err := images[kubeimages.Etcd].Layers()
	require.NoError(t, err)
	_, err = layers[0].Compressed()
	assert.ErrorContains(t, err, "changed size")
}

// TestImagesRunKubeadmsCommands builds and imports the images, and runs each component as
// kubeadm's manifest does: by its bare command name, in its image, through CRI.
func TestImagesRunKubeadmsCommands(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bins, err := kubeimages.FindBinaries()
	require.NoError(t, err)

	start := time.Now()
	images, err := kubeimages.Build(ctx, bins)
	require.NoError(t, err)
	t.Logf("built %d images in %v", len(images), time.Since(start).Round(time.Millisecond))
	refs := append(slices.Sorted(maps.Keys(kubeimages.Components())), kubeimages.Pause)
	require.ElementsMatch(t, refs, slices.Collect(maps.Keys(images)))
	for ref := range kubeimages.Components() {
		layers, err := images[ref].Layers()
		require.NoError(t, err)
		assert.Len(t, layers, 1, "%s: one layer", ref)
	}

	start = time.Now()
	require.NoError(t, kubeimages.Import(ctx, cd, images))
	t.Logf("imported them in %v", time.Since(start).Round(time.Millisecond))

	is, err := criclient.NewRemoteImageService(ctx, cd.Endpoint(), 10*time.Second, nil, false)
	require.NoError(t, err)
	for _, ref := range refs {
		status, err := is.ImageStatus(ctx, &runtimeapi.ImageSpec{Image: ref}, false)
		require.NoError(t, err)
		require.NotNil(t, status.GetImage(), "%s imported", ref)
		configDigest, err := images[ref].ConfigName()
		require.NoError(t, err)
		assert.Equal(t, configDigest.String(), status.GetImage().GetId(), ref)
		assert.Contains(t, status.GetImage().GetRepoTags(), ref)
	}
	sandboxImage, err := is.ImageStatus(ctx, &runtimeapi.ImageSpec{Image: testcontainerd.SandboxImage}, false)
	require.NoError(t, err)
	pause, err := is.ImageStatus(ctx, &runtimeapi.ImageSpec{Image: kubeimages.Pause}, false)
	require.NoError(t, err)
	assert.Equal(t, sandboxImage.GetImage().GetId(), pause.GetImage().GetId(),
		"kubeadm's pause is the image the runtime runs sandboxes from")

	rs, err := criclient.NewRemoteRuntimeService(ctx, cd.Endpoint(), 10*time.Second, nil, false)
	require.NoError(t, err)
	defer rs.Close(ctx)
	logDir := t.TempDir()
	sandboxConfig := &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: "kubeimages", Namespace: "test", Uid: "uid-kubeimages"},
		LogDirectory: logDir,
		Linux: &runtimeapi.LinuxPodSandboxConfig{SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
			NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_NODE},
		}},
	}
	sandbox, err := rs.RunPodSandbox(ctx, sandboxConfig, "")
	require.NoError(t, err)
	defer func() {
		assert.NoError(t, rs.StopPodSandbox(ctx, sandbox))
		assert.NoError(t, rs.RemovePodSandbox(ctx, sandbox))
	}()

	want := map[string]string{ // what each prints for --version
		kubeimages.APIServer:         "Kubernetes " + kubeimages.KubernetesVersion,
		kubeimages.ControllerManager: "Kubernetes " + kubeimages.KubernetesVersion,
		kubeimages.Scheduler:         "Kubernetes " + kubeimages.KubernetesVersion,
		kubeimages.Etcd:              "etcd Version: 3.6.8",
	}
	containers := map[string]string{}
	for ref, name := range kubeimages.Components() {
		id, err := rs.CreateContainer(ctx, sandbox, &runtimeapi.ContainerConfig{
			Metadata: &runtimeapi.ContainerMetadata{Name: name},
			Image:    &runtimeapi.ImageSpec{Image: ref},
			Command:  []string{name, "--version"}, // bare, as in kubeadm's manifests
			LogPath:  name + ".log",
		}, sandboxConfig)
		require.NoError(t, err, ref)
		require.NoError(t, rs.StartContainer(ctx, id), ref)
		containers[ref] = id
	}
	for ref, id := range containers {
		var status *runtimeapi.ContainerStatus
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			resp, err := rs.ContainerStatus(ctx, id, false)
			require.NoError(c, err)
			status = resp.GetStatus()
			assert.Equal(c, runtimeapi.ContainerState_CONTAINER_EXITED, status.GetState())
		}, time.Minute, 50*time.Millisecond, ref)
		log, err := os.ReadFile(filepath.Join(logDir, kubeimages.Components()[ref]+".log"))
		require.NoError(t, err)
		assert.Equal(t, int32(0), status.GetExitCode(), "%s: %s", ref, log)
		assert.Contains(t, string(log), want[ref], ref)
	}
}
