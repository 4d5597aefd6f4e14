package process

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vk-static/vk-static/lifecycle"
	"github.com/vk-static/vk-static/provider"
	"github.com/vk-static/vk-static/runtime/process/internal/records"
)

const (
	waitFor = 10 * time.Second
	tick    = 10 * time.Millisecond
)

// testPath is the PATH workloads get in tests.
const testPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// newTestRuntime is a runtime of cfg, closed when the test ends. Without a pod network
// (cfg.CNI), API pods share the host's network, as --process-allow-host-network lets them;
// TestNetworkNotReady is the refusal without it.
func newTestRuntime(t *testing.T, cfg Config) *Runtime {
	t.Helper()
	if cfg.StateDir == "" {
		cfg.StateDir = t.TempDir()
	}
	if cfg.CNI == nil {
		cfg.AllowHostNetwork = true
	}
	r, err := New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		r.Close()
		if t.Failed() {
			logs, _ := filepath.Glob(filepath.Join(cfg.StateDir, containersDir, "*", records.SupervisorLogFile))
			for _, l := range logs {
				if data, _ := os.ReadFile(l); len(data) > 0 {
					t.Logf("%s:\n%s", l, data)
				}
			}
		}
	})
	return r
}

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: runs workloads as other users and mounts in a mount namespace")
	}
}

// sandbox creates a sandbox.
func sandbox(t *testing.T, r *Runtime) string {
	t.Helper()
	id, err := r.RunSandbox(context.Background(), &lifecycle.SandboxConfig{PodUID: "uid-1", Namespace: "ns", Name: "pod", Labels: map[string]string{"pod": "yes"}})
	require.NoError(t, err)
	return id
}

// create creates a container in a new sandbox; cfg's LogPath defaults to a file in a temp dir,
// and it is stopped on cleanup: a container that cannot be stopped then is a process the test
// leaks, and fails it.
func create(t *testing.T, r *Runtime, cfg lifecycle.ContainerConfig) string {
	t.Helper()
	if cfg.Name == "" {
		cfg.Name = "c"
	}
	if cfg.LogPath == "" {
		cfg.LogPath = filepath.Join(t.TempDir(), "c.log")
	}
	if cfg.Env == nil {
		cfg.Env = []string{testPath}
	}
	id, err := r.CreateContainer(context.Background(), sandbox(t, r), &cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		// NotFound: the test removed the container itself.
		if err := r.StopContainer(ctx, id, 0); err != nil && !provider.IsNotFound(err) {
			t.Errorf("stop container %s (%s) when the test ended: %v", id, cfg.Name, err)
		}
	})
	return id
}

// run creates and starts a container.
func run(t *testing.T, r *Runtime, cfg lifecycle.ContainerConfig) string {
	t.Helper()
	id := create(t, r, cfg)
	require.NoError(t, r.StartContainer(context.Background(), id))
	return id
}

func status(t *testing.T, r *Runtime, id string) *lifecycle.ContainerStatus {
	t.Helper()
	s, err := r.ContainerStatus(context.Background(), id)
	require.NoError(t, err)
	return s
}

// waitExited waits for the container to have exited and returns its status.
func waitExited(t *testing.T, r *Runtime, id string) *lifecycle.ContainerStatus {
	t.Helper()
	require.Eventually(t, func() bool { return status(t, r, id).State == lifecycle.ContainerExited }, waitFor, tick)
	return status(t, r, id)
}

// logLine is one CRI log entry.
type logLine struct {
	stream, tag, content string
}

// readLog parses a CRI format log: "<RFC3339Nano> <stream> <tag> <content>".
func readLog(t *testing.T, path string) []logLine {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	defer f.Close()
	var out []logLine
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), " ", 4)
		require.Len(t, parts, 4, "log line %q", sc.Text())
		_, err := time.Parse(time.RFC3339Nano, parts[0])
		require.NoError(t, err, "timestamp of %q", sc.Text())
		out = append(out, logLine{parts[1], parts[2], parts[3]})
	}
	return out
}

// logContents is the log's content of one stream, a line each.
func logContents(t *testing.T, path, stream string) []string {
	var out []string
	for _, l := range readLog(t, path) {
		if l.stream == stream {
			out = append(out, l.content)
		}
	}
	return out
}
