package kubeletclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/cmd/vk-static/internal/cli"
	"github.com/vk-static/vk-static/node/api/localadmin"
)

// clientOptions are the flags of the subcommands that talk to a running agent's kubelet API.
type clientOptions struct {
	RootDir string
	Address string
	Port    int32
}

// addFlags registers --root-dir (default the agent's, defaultRootDir), --address and --port.
func (c *clientOptions) addFlags(fs *pflag.FlagSet, defaultRootDir string) {
	c.RootDir = defaultRootDir
	fs.StringVar(&c.RootDir, "root-dir", c.RootDir, "The agent's --root-dir: its kubelet API's address and the local administrator's credential are read from <root-dir>/pki/"+localadmin.KubeconfigFile+" (written by the agent, readable by its user only).")
	fs.StringVar(&c.Address, "address", "", "The kubelet API's IP address, when not the one the agent wrote down.")
	fs.Int32Var(&c.Port, "port", 0, "The kubelet API's port, when not the one the agent wrote down.")
}

// validate names a flag that is wrong.
func (c *clientOptions) validate() error {
	if c.Address != "" && net.ParseIP(c.Address) == nil {
		return fmt.Errorf("--address: %q is not an IP address", c.Address)
	}
	if c.Port < 0 || c.Port > 65535 {
		return fmt.Errorf("--port: %d is not a port", c.Port)
	}
	if c.RootDir == "" {
		return errors.New("--root-dir: must not be empty")
	}
	return nil
}

// kubeletClient talks to a running agent's kubelet API as the local administrator.
type kubeletClient struct {
	base    *url.URL
	http    *http.Client
	rootDir string
}

// connect reads the credential the agent wrote under --root-dir and points it at --address and
// --port when given. It does not dial: an agent that is not running shows at the first request.
func (c *clientOptions) connect() (*kubeletClient, error) {
	pki := filepath.Join(c.RootDir, "pki")
	cred, err := localadmin.ReadCredential(pki)
	if errors.Is(err, localadmin.ErrNoCredential) {
		return nil, fmt.Errorf("no agent with --root-dir %s has served its kubelet API (it writes the credential once it listens; --port 0 serves none): %w", c.RootDir, err)
	}
	if err != nil {
		return nil, fmt.Errorf("the local administrator's credential (readable by the agent's user only): %w", err)
	}
	base, err := url.Parse(cred.Server)
	if err != nil {
		return nil, fmt.Errorf("%s: server %q: %w", cred.Path, cred.Server, err)
	}
	host, port, _ := net.SplitHostPort(base.Host)
	if c.Address != "" {
		host = c.Address
	}
	if c.Port != 0 {
		port = strconv.Itoa(int(c.Port))
	}
	base.Host = net.JoinHostPort(host, port)
	return &kubeletClient{
		base:    base,
		rootDir: c.RootDir,
		// No timeout: logs -f streams until the container ends or the user stops it.
		http: &http.Client{Transport: &http.Transport{TLSClientConfig: cred.TLSConfig(), Proxy: nil}},
	}, nil
}

// open is what every subcommand that reads a running agent begins with: the flags checked (a
// wrong one is a usageErr), the agent's credential read and its pods listed. The caller closes
// the client.
func (c *clientOptions) open(ctx context.Context) (*kubeletClient, []corev1.Pod, error) {
	if err := c.validate(); err != nil {
		return nil, nil, usageErr{err}
	}
	client, err := c.connect()
	if err != nil {
		return nil, nil, err
	}
	pods, err := client.pods(ctx)
	if err != nil {
		client.close()
		return nil, nil, err
	}
	return client, pods, nil
}

// usageErr is a mistake in the command line: exit code 2.
type usageErr struct{ error }

// exitCode reports err, which the subcommand name failed with, on stderr: exit code 2 for a
// usageErr, else 1.
func exitCode(stderr io.Writer, name string, err error) int {
	var u usageErr
	if errors.As(err, &u) {
		return cli.UsageError(stderr, name, err)
	}
	return cli.Failure(stderr, name, err)
}

// close releases the client's idle connections.
func (k *kubeletClient) close() { k.http.CloseIdleConnections() }

// get requests path (with query) and returns the response when it is 200, else an error with
// what the agent said. A refused connection says the agent is not running, where it was tried.
func (k *kubeletClient) get(ctx context.Context, path string, query url.Values) (*http.Response, error) {
	u := *k.base
	u.Path = path
	u.RawQuery = query.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := k.http.Do(req)
	if err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) {
			return nil, fmt.Errorf("the agent is not running: nothing listens at %s (credential from --root-dir %s)", k.base, k.rootDir)
		}
		return nil, fmt.Errorf("the agent at %s (--root-dir %s): %w", k.base, k.rootDir, err)
	}
	if resp.StatusCode == http.StatusOK {
		return resp, nil
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return nil, &agentError{Status: resp.StatusCode, Message: strings.TrimSpace(string(msg)), Path: path}
}

// agentError is a non-200 answer of the agent.
type agentError struct {
	Status  int
	Message string
	Path    string
}

func (e *agentError) Error() string {
	return fmt.Sprintf("the agent answered %d %s for %s: %s", e.Status, http.StatusText(e.Status), e.Path, e.Message)
}

// pods lists the pods bound to the agent (its /pods).
func (k *kubeletClient) pods(ctx context.Context) ([]corev1.Pod, error) {
	resp, err := k.get(ctx, "/pods", nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var list corev1.PodList
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return nil, fmt.Errorf("decoding the agent's /pods: %w", err)
	}
	return list.Items, nil
}

// manifestURL is the agent's --manifest-url from its /configz, "" when it has none or does not
// say.
func (k *kubeletClient) manifestURL(ctx context.Context) string {
	resp, err := k.get(ctx, "/configz", nil)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var configz struct {
		KubeletConfig struct {
			StaticPodURL string `json:"staticPodURL"`
		} `json:"kubeletconfig"`
	}
	if json.NewDecoder(resp.Body).Decode(&configz) != nil {
		return ""
	}
	return configz.KubeletConfig.StaticPodURL
}
