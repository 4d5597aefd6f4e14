package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// The standalone user's view (issue 11, item 4): an agent with no API server, as `make run`
// starts it, with the process provider; vk-static pods lists what runs, and vk-static logs -f
// follows a container until it ends — through the kubelet API on 127.0.0.1, as the local
// administrator, with the credential the agent wrote under --root-dir.
func TestStandaloneCLIPodsAndLogs(t *testing.T) {
	a := startStandaloneProcessAgent(t)
	rootDir := filepath.Join(a.Dir, "root")
	ticker := staticPod("ticker", shell("i=0; while true; do echo tick $i; i=$((i+1)); sleep 0.2; done")...)
	a.writePod(ticker)
	// Ten lines over five seconds, then done: long enough to be followed while it runs.
	finite := staticPod("finite", shell("for i in 0 1 2 3 4 5 6 7 8 9; do echo line $i; sleep 0.5; done")...)
	finite.Spec.RestartPolicy = corev1.RestartPolicyNever
	a.writePod(finite)
	tickerName, finiteName := "ticker-"+a.Node, "finite-"+a.Node

	rows := waitPodRows(t, rootDir, 60*time.Second, "both pods running", func(rows map[string][]string) error {
		for _, name := range []string{tickerName, finiteName} {
			if r := rows["default/"+name]; r == nil || r[1] != "1/1" || r[2] != "Running" {
				return fmt.Errorf("%s: %v", name, r)
			}
		}
		return nil
	})
	assert.Equal(t, filepath.Join(a.ManifestDir, "ticker.json"), rows["default/"+tickerName][5], "SOURCE: the manifest file")
	assert.Equal(t, "0", rows["default/"+tickerName][3], "RESTARTS")

	// Follow the finite container while it runs: its lines come as they are written, and the
	// command ends by itself, exit 0, when the container does.
	follow := startCLI(t, "logs", "-f", finiteName, "--root-dir", rootDir)
	first := follow.next(t, 30*time.Second)
	assert.Equal(t, "line 0", first)
	stillRunning := podRows(t, rootDir)["default/"+finiteName]
	require.NotNil(t, stillRunning)
	assert.Equal(t, "Running", stillRunning[2], "followed while it ran")
	rest, code := follow.end(t, 30*time.Second)
	assert.Equal(t, 0, code, "stderr: %s", follow.stderr.String())
	assert.Equal(t, []string{"line 1", "line 2", "line 3", "line 4", "line 5", "line 6", "line 7", "line 8", "line 9"}, rest)

	waitPodRows(t, rootDir, 30*time.Second, "finite completed", func(rows map[string][]string) error {
		if r := rows["default/"+finiteName]; r == nil || r[1] != "0/1" || r[2] != "Completed" {
			return fmt.Errorf("%v", r)
		}
		return nil
	})

	// --tail and namespace/name on the running one; --timestamps puts an RFC 3339 time first.
	out, stderr, code := runCLI(t, "logs", "default/"+tickerName, "--tail", "2", "--timestamps", "--root-dir", rootDir)
	require.Equal(t, 0, code, stderr)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 2, out)
	for _, l := range lines {
		ts, text, _ := strings.Cut(l, " ")
		_, err := time.Parse(time.RFC3339Nano, ts)
		assert.NoError(t, err, l)
		assert.True(t, strings.HasPrefix(text, "tick "), l)
	}

	// Errors name what is wrong.
	_, stderr, code = runCLI(t, "logs", "nope", "--root-dir", rootDir)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, `pod "nope" not found; the agent's pods: default/`+finiteName+", default/"+tickerName)
	_, stderr, code = runCLI(t, "logs", tickerName, "-c", "sidecar", "--root-dir", rootDir)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, `container "sidecar" is not in pod default/`+tickerName+"; its containers: main")

	// Without the credential nothing gets in, loopback or not.
	assert.Equal(t, http.StatusUnauthorized, unauthenticatedStatus(t, a.APIPort), "a request without the local administrator's certificate")

	a.removePod("ticker")
	a.removePod("finite")
	waitPodRows(t, rootDir, 30*time.Second, "pods gone", func(rows map[string][]string) error {
		if len(rows) > 0 {
			return fmt.Errorf("still %v", rows)
		}
		return nil
	})
	a.noContainerProcesses(30 * time.Second)
	a.Stop()
	_, stderr, code = runCLI(t, "pods", "--root-dir", rootDir)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, fmt.Sprintf("the agent is not running: nothing listens at https://127.0.0.1:%d (credential from --root-dir %s)", a.APIPort, rootDir))
}

// startStandaloneProcessAgent is startProcessAgent without an API server.
func startStandaloneProcessAgent(t *testing.T) *agent {
	t.Helper()
	return startAgent(t, agentOptions{standalone: true, extraArgs: []string{"--provider", "process"}})
}

// runCLI runs the vk-static binary with args: stdout, stderr and the exit code.
func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, agentBinary, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("vk-static %v: %v", args, err)
	}
	return stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()
}

// podRows runs vk-static pods and returns its rows by NAME (each row's fields; AGE is one).
// A failure fails t, which may be a condition's *assert.CollectT.
func podRows(t require.TestingT, rootDir string) map[string][]string {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(agentBinary, "pods", "--root-dir", rootDir)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "vk-static pods: %s", stderr.String())
	rows := map[string][]string{}
	for i, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		fields := strings.Fields(line)
		if i == 0 || len(fields) == 0 { // the header, or no pods (said on stderr)
			continue
		}
		require.Len(t, fields, 6, line)
		rows[fields[0]] = fields
	}
	return rows
}

// waitPodRows polls vk-static pods until check passes, and returns those rows.
func waitPodRows(t *testing.T, rootDir string, timeout time.Duration, what string, check func(map[string][]string) error) map[string][]string {
	t.Helper()
	var got map[string][]string
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		rows := podRows(c, rootDir)
		if err := check(rows); err != nil {
			c.Errorf("%v", err)
			return
		}
		got = rows
	}, timeout, 200*time.Millisecond, what)
	return got
}

// unauthenticatedStatus is the HTTP status of GET /pods on the kubelet API without a client
// certificate.
func unauthenticatedStatus(t *testing.T, port int) int {
	t.Helper()
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // the status is what matters
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Get(fmt.Sprintf("https://127.0.0.1:%d/pods", port))
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

// startCLI starts vk-static args; it is killed when the test ends if it still runs.
func startCLI(t *testing.T, args ...string) *streaming {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	return startStreaming(t, exec.CommandContext(ctx, agentBinary, args...), cancel, false, "vk-static "+strings.Join(args, " "))
}

// With an API server the local administrator is still let in — the API server is not asked
// about it (it does not know the user) — and sees static pods under their mirrors' names
// beside the API pods, each with where it came from.
func TestCLIWithAPIServer(t *testing.T) {
	a := startProcessAgent(t)
	rootDir := filepath.Join(a.Dir, "root")
	pods := runStaticAndAPI(t, a, "cli", sameSpec(corev1.PodSpec{
		TerminationGracePeriodSeconds: ptr.To[int64](1),
		Containers: []corev1.Container{{Name: "main", Image: "busybox",
			Command: shell("i=0; while true; do echo tick $i; i=$((i+1)); sleep 0.2; done")}},
	}))
	static, api := pods[0], pods[1]

	rows := waitPodRows(t, rootDir, 30*time.Second, "both pods running", func(rows map[string][]string) error {
		for _, p := range pods {
			if r := rows[p.namespace+"/"+p.name]; r == nil || r[1] != "1/1" || r[2] != "Running" {
				return fmt.Errorf("%s/%s: %v", p.namespace, p.name, r)
			}
		}
		return nil
	})
	assert.Equal(t, filepath.Join(a.ManifestDir, "cli.json"), rows[static.namespace+"/"+static.name][5])
	assert.Equal(t, "api", rows[api.namespace+"/"+api.name][5])

	for _, p := range pods {
		out, stderr, code := runCLI(t, "logs", p.namespace+"/"+p.name, "--tail", "1", "--root-dir", rootDir)
		require.Equal(t, 0, code, stderr)
		assert.True(t, strings.HasPrefix(out, "tick "), "%s: %q", p.kind, out)
	}
	// The name alone is the API pod's: the static pod's is its mirror's, with the node's name.
	out, stderr, code := runCLI(t, "logs", "cli", "--tail", "1", "--root-dir", rootDir)
	require.Equal(t, 0, code, stderr)
	assert.True(t, strings.HasPrefix(out, "tick "), out)
}
