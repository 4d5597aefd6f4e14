package kubeletclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vk-static/vk-static/node/api"
	"github.com/vk-static/vk-static/podutil"
)

// fakeAgent serves the kubelet API as a standalone agent does (the local administrator only,
// its credential under rootDir/pki) with /pods answering pods, /containerLogs answering what
// it was asked, and /configz naming a manifest URL. It stops when the test ends, or at stop.
type fakeAgent struct {
	rootDir string
	port    string
	stop    func()
}

func startFakeAgent(t *testing.T, pods ...corev1.Pod) *fakeAgent {
	t.Helper()
	root := t.TempDir()
	srv, err := api.New(api.Config{NodeName: "node-a", Address: "127.0.0.1", CertDirectory: filepath.Join(root, "pki"), LocalAdmin: true})
	require.NoError(t, err)
	srv.Handle("GET /pods", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(corev1.PodList{Items: pods})
	}))
	srv.Handle("GET /configz", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, `{"kubeletconfig":{"staticPodURL":"https://manifests.example/pods.yaml"}}`)
	}))
	srv.Handle("GET /containerLogs/{namespace}/{pod}/{container}", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("container") == "gone" {
			http.Error(w, `container "gone" not found`, http.StatusNotFound)
			return
		}
		fmt.Fprintf(w, "%s/%s/%s?%s\n", r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container"), r.URL.RawQuery)
	}))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	a := &fakeAgent{rootDir: root}
	var once bool
	a.stop = func() {
		if once {
			return
		}
		once = true
		cancel()
		require.NoError(t, <-done)
	}
	t.Cleanup(a.stop)
	select {
	case <-srv.Ready():
	case err := <-done:
		t.Fatal(err)
	case <-time.After(10 * time.Second):
		t.Fatal("not ready")
	}
	_, a.port, _ = strings.Cut(srv.Addr(), ":")
	return a
}

// runCLI runs the subcommand line args (pods or logs, then its arguments) as vk-static does:
// exit code, stdout, stderr.
func runCLI(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	command := map[string]func(context.Context, []string, io.Writer, io.Writer, string) int{"pods": Pods, "logs": Logs}[args[0]]
	code := command(context.Background(), args[1:], &stdout, &stderr, "/var/lib/vk-static")
	return code, stdout.String(), stderr.String()
}

func staticPodFor(namespace, name, file string, containers ...string) corev1.Pod {
	p := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, CreationTimestamp: metav1.Now(),
			Annotations: map[string]string{podutil.ConfigSourceAnnotationKey: podutil.FileSource, podutil.ConfigFileAnnotationKey: file}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
	for _, c := range containers {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: c})
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, running(c, true))
	}
	return p
}

// vk-static pods, against a kubelet API that lets only the local administrator in: the
// credential the agent wrote is enough, and the table shows every pod.
func TestPodsCommand(t *testing.T) {
	fromURL := staticPodFor("default", "remote-node-a", "", "main")
	fromURL.Annotations = map[string]string{podutil.ConfigSourceAnnotationKey: podutil.HTTPSource}
	a := startFakeAgent(t, staticPodFor("default", "web-node-a", "/m/web.yaml", "main"), fromURL)

	code, stdout, stderr := runCLI("pods", "--root-dir", a.rootDir)
	require.Equal(t, 0, code, stderr)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	require.Len(t, lines, 3, stdout)
	assert.Equal(t, []string{"NAME", "READY", "STATUS", "RESTARTS", "AGE", "SOURCE"}, strings.Fields(lines[0]))
	assert.Equal(t, []string{"default/web-node-a", "1/1", "Running", "0", "/m/web.yaml"}, without(strings.Fields(lines[1]), 4))
	assert.Equal(t, []string{"default/remote-node-a", "1/1", "Running", "0", "https://manifests.example/pods.yaml"}, without(strings.Fields(lines[2]), 4))

	// --port points elsewhere: nothing listens there.
	code, _, stderr = runCLI("pods", "--root-dir", a.rootDir, "--address", "127.0.0.1", "--port", "1")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "the agent is not running: nothing listens at https://127.0.0.1:1")
	assert.Contains(t, stderr, "--root-dir "+a.rootDir)

	a.stop()
	code, _, stderr = runCLI("pods", "--root-dir", a.rootDir)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "the agent is not running: nothing listens at https://127.0.0.1:"+a.port, "the address tried")

	root := t.TempDir()
	code, _, stderr = runCLI("pods", "--root-dir", root)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "no agent with --root-dir "+root+" has served its kubelet API")
	assert.Contains(t, stderr, filepath.Join(root, "pki", "local-admin.kubeconfig"))
}

// without is fields without the one at i (AGE, which depends on the time).
func without(fields []string, i int) []string {
	if i >= len(fields) {
		return fields
	}
	return append(append([]string(nil), fields[:i]...), fields[i+1:]...)
}

// vk-static logs asks the agent for the container's log with the kubelet's query parameters;
// the pod is found by name or namespace/name, the container is the only one or -c's.
func TestLogsCommand(t *testing.T) {
	ticker := staticPodFor("default", "ticker-node-a", "/m/ticker.yaml", "main")
	ticker.Spec.NodeName = "Node-A"
	a := startFakeAgent(t,
		staticPodFor("default", "web", "/m/web.yaml", "main"),
		staticPodFor("default", "two", "/m/two.yaml", "app", "gone"),
		ticker,
		staticPodFor("default", "dup", "/m/dup.yaml", "main"),
		staticPodFor("other", "dup", "/m/dup2.yaml", "main"),
	)
	root := []string{"--root-dir", a.rootDir}
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr []string
	}{
		{name: "by name", args: []string{"web"}, stdout: "default/web/main?\n"},
		{name: "every option", args: []string{"default/web", "-c", "main", "-f", "--tail", "3", "--timestamps", "--previous"},
			stdout: "default/web/main?follow=true&previous=true&tailLines=3&timestamps=true\n"},
		{name: "--tail 0", args: []string{"web", "--tail=0"}, stdout: "default/web/main?tailLines=0\n"},
		{name: "namespace/name", args: []string{"other/dup"}, stdout: "other/dup/main?\n"},
		{name: "a static pod by its manifest's name", args: []string{"ticker"}, stdout: "default/ticker-node-a/main?\n"},
		{name: "-c", args: []string{"two", "-c", "app"}, stdout: "default/two/app?\n"},
		{name: "ambiguous container", args: []string{"two"}, code: 2, stderr: []string{"pod default/two has 2 containers: app, gone; choose one with -c"}},
		{name: "ambiguous pod", args: []string{"dup"}, code: 2, stderr: []string{`pod "dup" is in several namespaces: default/dup, other/dup`}},
		{name: "unknown pod", args: []string{"nope"}, code: 1, stderr: []string{`pod "nope" not found; the agent's pods: default/web, default/two, default/ticker-node-a, default/dup, other/dup`}},
		{name: "unknown container", args: []string{"web", "-c", "x"}, code: 1, stderr: []string{`container "x" is not in pod default/web; its containers: main`}},
		{name: "the agent refuses", args: []string{"two", "-c", "gone"}, code: 1, stderr: []string{"the agent answered 404 Not Found", `container "gone" not found`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(append(append([]string{"logs"}, tc.args...), root...)...)
			assert.Equal(t, tc.code, code, stderr)
			assert.Equal(t, tc.stdout, stdout)
			for _, s := range tc.stderr {
				assert.Contains(t, stderr, s)
			}
		})
	}
}

// Mistakes in the command line are named, exit 2, and reach no agent.
func TestClientCommandUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"pods", "extra"}, `vk-static pods: unexpected argument "extra"`},
		{[]string{"pods", "--nope"}, "vk-static pods: unknown flag: --nope"},
		{[]string{"pods", "--address", "localhost"}, `--address: "localhost" is not an IP address`},
		{[]string{"pods", "--port", "70000"}, "--port: 70000 is not a port"},
		{[]string{"pods", "--root-dir", ""}, "--root-dir: must not be empty"},
		{[]string{"logs"}, "vk-static logs: no POD"},
		{[]string{"logs", "a", "b"}, `unexpected argument "b"`},
		{[]string{"logs", "a", "--tail", "-2"}, "--tail: -2 is not -1 (all) or a number of lines"},
		{[]string{"logs", "a", "--tail", "x"}, `invalid argument "x" for "--tail"`},
		{[]string{"logs", "/a"}, `POD "/a" is not a name or namespace/name`},
		{[]string{"logs", "a/b/c"}, `POD "a/b/c" is not a name or namespace/name`},
	} {
		// A root directory nothing wrote to: were an agent reached, the error would differ.
		code, stdout, stderr := runCLI(append(tc.args, "--root-dir="+t.TempDir())...)
		if tc.args[len(tc.args)-1] == "" { // --root-dir "" must win
			code, stdout, stderr = runCLI(tc.args...)
		}
		assert.Equal(t, 2, code, "%v: %s", tc.args, stderr)
		assert.Empty(t, stdout)
		assert.Contains(t, stderr, tc.want, tc.args)
		assert.Contains(t, stderr, "See 'vk-static "+tc.args[0]+" --help'.", tc.args)
	}
	for _, cmd := range []string{"pods", "logs"} {
		code, stdout, _ := runCLI(cmd, "--help")
		assert.Equal(t, 0, code)
		assert.Contains(t, stdout, "Usage:\n  vk-static "+cmd)
		assert.Contains(t, stdout, "--root-dir")
	}
}
