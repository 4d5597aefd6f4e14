package testenv

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/vk-static/vk-static/test/support/childproc"
)

// DefaultNodes are the node identities in the token file when Options.Nodes is empty.
var DefaultNodes = []string{"node-a", "node-b", "node-c"}

// Options configure Start. The zero value is a production-like control plane with the
// DefaultNodes identities.
type Options struct {
	// BinDir holds kube-apiserver and etcd; default $VK_STATIC_TESTBIN or the Makefile's cache.
	BinDir string
	// Nodes get a bearer token each (system:node:<name>, group system:nodes).
	Nodes []string
	// ExtraAPIServerArgs are appended to the API server's command line.
	ExtraAPIServerArgs []string
	// VerifyKubeletServingCerts makes the API server verify the serving certificate of every
	// agent it calls (logs, exec, port-forward) against CAFile, as a production cluster with
	// --kubelet-certificate-authority does: agents must then serve a certificate from
	// IssueServingCert for the address the API server dials (their InternalIP). Off, the API
	// server trusts any certificate, and agents may keep their self-signed ones.
	VerifyKubeletServingCerts bool
	// KubeadmKubeletClient gives the API server kubeadm's kubelet client certificate: user
	// kube-apiserver-kubelet-client in no group, which may use an agent's kubelet API only once
	// RBAC allows it (deploy/rbac.yaml). By default the certificate is also in system:masters,
	// allowed everything, so that tests need no RBAC for it.
	KubeadmKubeletClient bool
	// ControllerManager, when set, starts kube-controller-manager too (certificate signing and
	// approval, bootstrap tokens, service accounts): only for packages that need it, since
	// it costs start-up time and memory.
	ControllerManager *ControllerManagerOptions
}

// Env is a running control plane. Its fields are read-only.
type Env struct {
	// Dir holds certificates, the token file, etcd's data (unless on tmpfs) and both logs.
	Dir string
	// Host is the API server's URL (https://127.0.0.1:PORT).
	Host string
	// CAFile / CAData is the CA that signed the API server's serving certificate and every
	// client certificate, including the kubelet client certificate; an agent trusts it to
	// authenticate the API server calling its HTTP API (--client-ca-file).
	CAFile string
	CAData []byte
	// Admin is a system:masters client for test set-up and assertions.
	Admin       kubernetes.Interface
	AdminConfig *rest.Config

	ca         *authority
	nodeTokens map[string]string
	etcdDir    string
	etcd       *childproc.Process
	apiserver  *childproc.Process
	// controllerManager runs with Options.ControllerManager only.
	controllerManager *childproc.Process
	saKeyFile         string
	bin               string   // directory of the binaries
	apiArgs           []string // the API server's command line, for RestartAPIServer
}

// Start launches etcd and kube-apiserver and returns once the API server is ready and the
// default namespace has its ServiceAccount and kube-root-ca.crt ConfigMap.
func Start(ctx context.Context, opts Options) (*Env, error) {
	bin, err := binDir(opts.BinDir)
	if err != nil {
		return nil, err
	}
	var lastErr error
	for attempt := 0; attempt < 2; attempt++ { // a second try covers a lost free-port race
		env, err := start(ctx, bin, opts)
		if err == nil {
			return env, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

// BinDir is the directory of the test control plane's binaries (kube-apiserver, etcd,
// kube-controller-manager, kubectl): $VK_STATIC_TESTBIN, else the Makefile's cache directory;
// an error, naming `make testbin`, when kube-apiserver or etcd is missing there. For tests that
// run those binaries themselves rather than through Start (test/e2ekubeadm: kubeadm's static
// pods).
func BinDir() (string, error) { return binDir("") }

func binDir(dir string) (string, error) {
	if dir == "" {
		dir = os.Getenv("VK_STATIC_TESTBIN")
	}
	if dir == "" {
		var err error
		if dir, err = defaultBinDir(); err != nil {
			return "", fmt.Errorf("locate the test control plane: %w (run `make testbin` or set VK_STATIC_TESTBIN)", err)
		}
	}
	for _, name := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return "", fmt.Errorf("test control plane binary %s missing in %s: run `make testbin` (or set VK_STATIC_TESTBIN): %w", name, dir, err)
		}
	}
	return dir, nil
}

// defaultBinDir is the Makefile's TESTBIN (ToolsCacheDir of hack/tools).
func defaultBinDir() (string, error) { return ToolsCacheDir("hack/tools", "testbin") }

// ToolsCacheDir is where the Makefile builds the binaries of the tools module at module (a
// slash-separated path from the repository's root): the user cache directory's
// vk-static/<kind>/v1.36.3-<key>, key the first 12 hex digits of the module's go.sum's SHA-256,
// that file found by walking up from the working directory (go test runs in the package's).
func ToolsCacheDir(module, kind string) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		sum, err := os.ReadFile(filepath.Join(d, filepath.FromSlash(module), "go.sum"))
		if err == nil {
			h := sha256.Sum256(sum)
			return filepath.Join(cache, "vk-static", kind, "v1.36.3-"+hex.EncodeToString(h[:])[:12]), nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no %s/go.sum above %s", module, wd)
		}
	}
}

func start(ctx context.Context, bin string, opts Options) (_ *Env, err error) {
	dir, err := os.MkdirTemp("", "vk-static-testenv-")
	if err != nil {
		return nil, err
	}
	env := &Env{Dir: dir, nodeTokens: map[string]string{}, bin: bin}
	defer func() {
		if err != nil {
			env.stop()
			err = fmt.Errorf("%w (logs in %s)", err, dir)
		}
	}()
	if env.ca, err = newAuthority(); err != nil {
		return nil, err
	}
	env.CAData = env.ca.CertPEM
	env.CAFile = filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(env.CAFile, env.CAData, 0o600); err != nil {
		return nil, err
	}

	etcdPort, err := FreePort()
	if err != nil {
		return nil, err
	}
	peerPort, err := FreePort()
	if err != nil {
		return nil, err
	}
	env.etcdDir = etcdDataDir(dir)
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(etcdPort)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(peerPort)
	env.etcd, err = startProcess("etcd", filepath.Join(dir, "etcd.log"), filepath.Join(bin, "etcd"),
		"--data-dir", env.etcdDir,
		"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "default="+peerURL,
		"--unsafe-no-fsync", // tests never need durability across a crash
		"--log-level", "warn",
	)
	if err != nil {
		return nil, err
	}

	args, err := env.apiServerFlags(opts, etcdURL)
	if err != nil {
		return nil, err
	}
	if opts.VerifyKubeletServingCerts {
		args = append(args, "--kubelet-certificate-authority", env.CAFile)
	}
	env.apiArgs = append(args, opts.ExtraAPIServerArgs...)
	if err := env.StartAPIServer(ctx); err != nil {
		return nil, err
	}
	if opts.ControllerManager != nil {
		if err := env.startControllerManager(ctx, *opts.ControllerManager); err != nil {
			return nil, err
		}
	}
	if err := env.ensureDefaultServiceAccount(ctx, "default"); err != nil {
		return nil, err
	}
	if err := env.ensureRootCAConfigMap(ctx, "default"); err != nil {
		return nil, err
	}
	return env, nil
}

// etcdDataDir prefers tmpfs: etcd's fsyncs dominate API latency on a disk.
func etcdDataDir(dir string) string {
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		if d, err := os.MkdirTemp("/dev/shm", "vk-static-etcd-"); err == nil {
			return d
		}
	}
	return filepath.Join(dir, "etcd")
}

func (e *Env) apiServerFlags(opts Options, etcdURL string) ([]string, error) {
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	e.Host = "https://127.0.0.1:" + strconv.Itoa(port)

	serving, err := e.ca.issue(pkix.Name{CommonName: "kube-apiserver"},
		[]string{"127.0.0.1", "localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "10.0.0.1"},
		x509.ExtKeyUsageServerAuth)
	if err != nil {
		return nil, err
	}
	servingCert, servingKey, err := writeKeyPair(e.Dir, "apiserver", serving)
	if err != nil {
		return nil, err
	}
	// The identity the API server presents to the agent for logs/exec, as kubeadm names it.
	kubeletClientName := pkix.Name{CommonName: "kube-apiserver-kubelet-client", Organization: []string{"system:masters"}}
	if opts.KubeadmKubeletClient {
		kubeletClientName.Organization = nil
	}
	kubeletClient, err := e.ca.issue(kubeletClientName, nil, x509.ExtKeyUsageClientAuth)
	if err != nil {
		return nil, err
	}
	kubeletCert, kubeletKey, err := writeKeyPair(e.Dir, "apiserver-kubelet-client", kubeletClient)
	if err != nil {
		return nil, err
	}
	// Service-account tokens are signed with a key of their own.
	saKey, err := e.ca.issue(pkix.Name{CommonName: "service-accounts"}, nil, x509.ExtKeyUsageClientAuth)
	if err != nil {
		return nil, err
	}
	_, saKeyFile, err := writeKeyPair(e.Dir, "sa", saKey)
	if err != nil {
		return nil, err
	}
	e.saKeyFile = saKeyFile
	tokenFile, adminToken, err := e.writeTokenFile(opts.Nodes)
	if err != nil {
		return nil, err
	}
	e.AdminConfig = e.tokenConfig(adminToken)
	if e.Admin, err = kubernetes.NewForConfig(e.AdminConfig); err != nil {
		return nil, err
	}
	return []string{
		"--etcd-servers", etcdURL,
		"--bind-address", "127.0.0.1",
		"--advertise-address", "127.0.0.1",
		"--secure-port", strconv.Itoa(port),
		"--tls-cert-file", servingCert, "--tls-private-key-file", servingKey,
		"--cert-dir", filepath.Join(e.Dir, "certs"),
		"--authorization-mode", "Node,RBAC",
		"--enable-admission-plugins", "NodeRestriction",
		"--token-auth-file", tokenFile,
		"--enable-bootstrap-token-auth", // tokens in kube-system Secrets, as kubeadm join uses
		"--client-ca-file", e.CAFile,
		"--kubelet-client-certificate", kubeletCert, "--kubelet-client-key", kubeletKey,
		"--kubelet-preferred-address-types", "InternalIP",
		"--service-account-issuer", "https://kubernetes.default.svc",
		"--service-account-key-file", saKeyFile,
		"--service-account-signing-key-file", saKeyFile,
		"--service-cluster-ip-range", "10.0.0.0/24",
		"--allow-privileged=true", // kubeadm-style static pods (hostNetwork, privileged) must mirror
		"--profiling=false",
		"--v=1",
	}, nil
}

// writeTokenFile writes the static token file: one admin and one identity per node, as
// "token,user,uid,groups".
func (e *Env) writeTokenFile(nodes []string) (path, adminToken string, err error) {
	if len(nodes) == 0 {
		nodes = DefaultNodes
	}
	adminToken = randomToken()
	lines := []string{adminToken + ",admin,admin-uid,\"system:masters\""}
	for _, n := range nodes {
		tok := randomToken()
		e.nodeTokens[n] = tok
		lines = append(lines, fmt.Sprintf("%s,system:node:%s,node-%s-uid,\"system:nodes\"", tok, n, n))
	}
	path = filepath.Join(e.Dir, "tokens.csv")
	return path, adminToken, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600)
}

func randomToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// StartAPIServer starts the API server (again) with the same port, flags and identities, and
// returns once it is ready. With StopAPIServer it simulates an API server outage.
func (e *Env) StartAPIServer(ctx context.Context) error {
	if e.apiserver != nil && !e.apiserver.Exited() {
		return fmt.Errorf("kube-apiserver is already running")
	}
	p, err := startProcess("kube-apiserver", filepath.Join(e.Dir, "kube-apiserver.log"),
		filepath.Join(e.bin, "kube-apiserver"), e.apiArgs...)
	if err != nil {
		return err
	}
	e.apiserver = p
	return e.waitReady(ctx)
}

// ControlPlanePIDs are the processes of etcd and the API server as they run now (the API
// server's changes when StartAPIServer starts it again): what a benchmark reads the control
// plane's CPU from.
func (e *Env) ControlPlanePIDs() []int {
	return []int{e.etcd.Pid(), e.apiserver.Pid()}
}

// StopAPIServer kills the API server (etcd keeps its data); clients see connection refused.
func (e *Env) StopAPIServer() {
	e.apiserver.Stop(0)
}

// waitReady polls /readyz until it answers ok, a process dies, or 60 s pass.
func (e *Env) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	rc := e.Admin.Discovery().RESTClient()
	for {
		body, err := rc.Get().AbsPath("/readyz").DoRaw(ctx)
		if err == nil && string(body) == "ok" {
			return nil
		}
		for _, p := range []*childproc.Process{e.etcd, e.apiserver} {
			if p.Exited() {
				return fmt.Errorf("%s exited during start-up: %v", p.Name(), p.Err())
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kube-apiserver not ready: %w (last: %v)", ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Stop kills both processes and removes the environment's files. keepLogs leaves Dir (with
// both logs) in place and returns its path in the error-free case for the caller to print.
func (e *Env) Stop(keepLogs bool) {
	e.stop()
	if !keepLogs {
		_ = os.RemoveAll(e.Dir)
	}
}

func (e *Env) stop() {
	e.controllerManager.Stop(5 * time.Second)
	e.apiserver.Stop(5 * time.Second)
	e.etcd.Stop(5 * time.Second)
	if e.etcdDir != "" && strings.HasPrefix(e.etcdDir, "/dev/shm/") {
		_ = os.RemoveAll(e.etcdDir)
	}
}
