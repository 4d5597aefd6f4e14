package conformance

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/test/support/testimage"
)

// ImageSources are the files the look-alike images are made of: the machine's (Debian's
// busybox-static, bash-static, curl, netcat-openbsd, libc-bin's getent, hostname) and the
// ones make conformance-bin builds (agnhost, nonewprivs), plus the Kubernetes source tree for
// the files the upstream images add (porter's certificate, kitten's and nautilus's pages).
type ImageSources struct {
	Busybox, Bash, Curl, Netcat, Getent, Hostname string
	Agnhost, Nonewprivs                           string
	KubernetesDir                                 string
}

// DefaultImageSources are the Debian packages' paths, with the conformance binaries in binDir.
func DefaultImageSources(binDir, kubernetesDir string) ImageSources {
	return ImageSources{
		Busybox: "/bin/busybox", Bash: "/bin/bash-static", Curl: "/usr/bin/curl", Netcat: "/bin/nc.openbsd",
		Getent: "/usr/bin/getent", Hostname: "/bin/hostname",
		Agnhost: filepath.Join(binDir, "agnhost"), Nonewprivs: filepath.Join(binDir, "nonewprivs"),
		KubernetesDir: kubernetesDir,
	}
}

// The upstream busybox image's users and groups (docker.io/library/busybox): specs run as
// some of them by name, and id/ls print their names.
const (
	busyboxPasswd = `root:x:0:0:root:/root:/bin/sh
daemon:x:1:1:daemon:/usr/sbin:/bin/false
bin:x:2:2:bin:/bin:/bin/false
sys:x:3:3:sys:/dev:/bin/false
sync:x:4:100:sync:/bin:/bin/sync
mail:x:8:8:mail:/var/spool/mail:/bin/false
www-data:x:33:33:www-data:/var/www:/bin/false
operator:x:37:37:Operator:/var:/bin/false
nobody:x:65534:65534:nobody:/home:/bin/false
`
	busyboxGroup = `root:x:0:
daemon:x:1:
bin:x:2:
sys:x:3:
adm:x:4:
tty:x:5:
disk:x:6:
lp:x:7:
mail:x:8:
kmem:x:9:
wheel:x:10:root
cdrom:x:11:
dialout:x:18:
floppy:x:19:
video:x:28:
audio:x:29:
tape:x:32:
www-data:x:33:
operator:x:37:
utmp:x:43:
plugdev:x:46:
staff:x:50:
lock:x:54:
netdev:x:82:
users:x:100:
nogroup:x:65534:
`
	// agnhost's Dockerfile adds a user and a group for the SupplementalGroups specs.
	agnhostPasswd = "user-defined-in-image:x:1000:1000:Linux User,,,:/home/user-defined-in-image:/bin/sh\n"
	agnhostGroup  = "user-defined-in-image:x:1000:\ngroup-defined-in-image:x:50000:user-defined-in-image\n"
)

// defaultPath is the upstream images' PATH.
const defaultPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// shPackage is the busybox image's /bin/sh (see its doc).
const shPackage = "github.com/vk-static/vk-static/test/conformance/imagebin/sh"

// Images builds the look-alike of every image the selected specs pull, by repository:tag
// under the registry (the tags of k8s.io/kubernetes/test/utils/image at v1.36.3, which
// KUBE_TEST_REPO_LIST maps to it; RepoList). They share layers as the upstream images share
// base images: busybox's under all, agnhost's under kitten and nautilus.
func Images(ctx context.Context, src ImageSources) (map[string]v1.Image, error) {
	logger := klog.FromContext(ctx)
	sh, err := buildStatic(ctx, shPackage)
	if err != nil {
		return nil, err
	}
	busyboxFS, err := busyboxTree(src, sh)
	if err != nil {
		return nil, err
	}
	agnhostFS, err := agnhostTree(src)
	if err != nil {
		return nil, err
	}
	busybox, err := busyboxFS.layer()
	if err != nil {
		return nil, err
	}
	agnhost, err := agnhostFS.layer()
	if err != nil {
		return nil, err
	}
	images := map[string]v1.Image{}
	add := func(repoTag string, cfg v1.Config, layers ...v1.Layer) error {
		img, err := imageOf(cfg, layers...)
		if err != nil {
			return fmt.Errorf("image %s: %w", repoTag, err)
		}
		images[repoTag] = img
		return nil
	}
	// top is one more layer of files on a base.
	top := func(repoTag string, cfg v1.Config, t tree, base ...v1.Layer) error {
		l, err := t.layer()
		if err != nil {
			return fmt.Errorf("image %s: %w", repoTag, err)
		}
		return add(repoTag, cfg, append(base, l)...)
	}
	agnhostCfg := v1.Config{Entrypoint: []string{"/agnhost"}, Cmd: []string{"pause"}}

	if err := add("e2e-test-images/busybox:1.37.0-1", v1.Config{Cmd: []string{"sh"}}, busybox); err != nil {
		return nil, err
	}
	// The private registry's agnhost is pulled with an image pull secret, which this registry
	// does not check.
	for _, ref := range []string{"e2e-test-images/agnhost:2.63.0", "e2e-test-images/agnhost:2.55", "k8s-authenticated-test/agnhost:2.6"} {
		if err := add(ref, agnhostCfg, busybox, agnhost); err != nil {
			return nil, err
		}
	}
	if err := add("e2e-test-images/nonroot:1.5", v1.Config{Cmd: []string{"sh"}, User: "1234"}, busybox); err != nil {
		return nil, err
	}
	// nginx: busybox's httpd serving a page on :80 in the foreground.
	nginx := tree{}
	nginx.file("/usr/share/nginx/html/index.html", 0o644, []byte("<html><body>Welcome to nginx!</body></html>\n"))
	nginxCfg := v1.Config{Cmd: []string{"httpd", "-f", "-p", "80", "-h", "/usr/share/nginx/html"},
		ExposedPorts: map[string]struct{}{"80/tcp": {}}, StopSignal: "SIGQUIT"}
	for _, tag := range []string{"1.15-4", "1.27-0"} {
		if err := top("e2e-test-images/nginx:"+tag, nginxCfg, nginx, busybox); err != nil {
			return nil, err
		}
	}
	// nonewprivs: nnp, setuid root, prints its effective uid.
	nnp := tree{}
	if err := nnp.hostFile("/usr/local/bin/nnp", src.Nonewprivs, 0o4755); err != nil {
		return nil, err
	}
	if err := top("e2e-test-images/nonewprivs:1.4", v1.Config{Cmd: []string{"nnp"}}, nnp, busybox); err != nil {
		return nil, err
	}
	// kitten and nautilus: agnhost's test-webserver serving a picture and data.json from /.
	for _, name := range []string{"kitten", "nautilus"} {
		t := tree{}
		html := filepath.Join(src.KubernetesDir, "test", "images", name, "html")
		if err := t.hostFile("/"+name+".jpg", filepath.Join(html, name+".jpg"), 0o644); err != nil {
			return nil, err
		}
		if err := t.hostFile("/data.json", filepath.Join(html, "data.json"), 0o644); err != nil {
			return nil, err
		}
		cfg := v1.Config{Entrypoint: []string{"/agnhost"}, Cmd: []string{"test-webserver"}}
		if err := top("e2e-test-images/"+name+":1.8", cfg, t, busybox, agnhost); err != nil {
			return nil, err
		}
	}
	// glibc-dns-testing: glibc's hostname and getent (the resolver the specs check) on busybox.
	glibc := tree{}
	if err := glibc.hostProgram("/bin/hostname", src.Hostname); err != nil {
		return nil, err
	}
	if err := glibc.hostProgram("/usr/bin/getent", src.Getent); err != nil {
		return nil, err
	}
	if err := top("e2e-test-images/glibc-dns-testing:2.0.0", v1.Config{Cmd: []string{"sh"}}, glibc, busybox); err != nil {
		return nil, err
	}
	// pause: the sandbox image's program (test/support/testimage's workload, "pause").
	pause, err := testimage.Build(testimage.Options{Cmd: []string{"pause"}})
	if err != nil {
		return nil, err
	}
	images["pause:3.10.2"] = pause
	logger.V(1).Info("Built look-alike images", "count", len(images))
	return images, nil
}

// busyboxTree is Debian's busybox-static with every applet in /bin and at its usual path
// (busybox --list-full), the upstream image's users and directories, and sh (imagebin/sh).
func busyboxTree(src ImageSources, sh []byte) (tree, error) {
	t := tree{}
	if err := t.hostFile("/bin/busybox", src.Busybox, 0o755); err != nil {
		return nil, fmt.Errorf("busybox (Debian package busybox-static): %w", err)
	}
	out, err := exec.Command(src.Busybox, "--list-full").Output()
	if err != nil {
		return nil, fmt.Errorf("%s --list-full: %w", src.Busybox, err)
	}
	// Every applet in /bin, as the upstream image has them (the Sysctls specs run
	// /bin/sysctl), and at the path Debian's --list-full gives it too (/usr/bin/env, …).
	for _, applet := range strings.Fields(string(out)) {
		if applet != "bin/busybox" {
			t.link("/"+applet, "/bin/busybox")
			t.link("/bin/"+path.Base(applet), "/bin/busybox")
		}
	}
	t.file("/bin/sh", 0o755, sh)
	t.file("/etc/passwd", 0o644, []byte(busyboxPasswd))
	t.file("/etc/group", 0o644, []byte(busyboxGroup))
	for _, d := range []string{"/etc", "/home", "/var", "/var/spool/mail", "/var/www", "/usr/local/bin", "/proc", "/sys", "/dev"} {
		t.dir(d, 0o755)
	}
	t.dir("/root", 0o700)
	t.dir("/tmp", 0o1777)
	return t, nil
}

// agnhostTree is what the agnhost image adds to busybox: /agnhost (and agnhost-2, for the entrypoint
// specs), /uploads (netexec), porter's certificate, its user and group, bash as /bin/bash and
// /bin/sh, curl and netcat. sh is bash here, not busybox's ash: Debian's static busybox runs
// its own applets ahead of PATH, and its nc has no -u, which the UDP specs use.
func agnhostTree(src ImageSources) (tree, error) {
	t := tree{}
	if err := t.hostFile("/agnhost", src.Agnhost, 0o755); err != nil {
		return nil, fmt.Errorf("agnhost (make conformance-bin): %w", err)
	}
	t.link("/agnhost-2", "agnhost")
	t.dir("/uploads", 0o755)
	porter := filepath.Join(src.KubernetesDir, "test", "images", "agnhost", "porter")
	for _, f := range []string{"localhost.crt", "localhost.key"} {
		if err := t.hostFile("/"+f, filepath.Join(porter, f), 0o644); err != nil {
			return nil, err
		}
	}
	t.file("/etc/passwd", 0o644, []byte(busyboxPasswd+agnhostPasswd))
	t.file("/etc/group", 0o644, []byte(busyboxGroup+agnhostGroup))
	t.dir("/home/user-defined-in-image", 0o755)
	if err := t.hostFile("/bin/bash", src.Bash, 0o755); err != nil {
		return nil, fmt.Errorf("bash (Debian package bash-static): %w", err)
	}
	t.link("/bin/sh", "bash")
	if err := t.hostProgram("/usr/bin/curl", src.Curl); err != nil {
		return nil, fmt.Errorf("curl (Debian package curl): %w", err)
	}
	if err := t.hostProgram("/usr/bin/nc", src.Netcat); err != nil {
		return nil, fmt.Errorf("nc (Debian package netcat-openbsd): %w", err)
	}
	return t, nil
}

// imageOf is an image of layers for this machine's architecture, with cfg (PATH added).
func imageOf(cfg v1.Config, layers ...v1.Layer) (v1.Image, error) {
	cfg.Env = append([]string{defaultPath}, cfg.Env...)
	img, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{OS: "linux", Architecture: runtime.GOARCH, Config: cfg})
	if err != nil {
		return nil, err
	}
	return mutate.AppendLayers(img, layers...)
}

// buildStatic compiles a program of this module without cgo and returns it.
func buildStatic(ctx context.Context, pkg string) ([]byte, error) {
	dir, err := os.MkdirTemp("", "vk-static-conformance-build-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "program")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build %s: %w\n%s", pkg, err, out)
	}
	return os.ReadFile(bin)
}
