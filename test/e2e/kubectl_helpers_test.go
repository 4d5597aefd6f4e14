package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/test/support/podwait"
	"github.com/vk-static/vk-static/test/support/testenv"
)

// Helpers of the kubectl tests ([TestKubectlLogs] and those after it): running kubectl, reading its
// output as it comes, a pod run both as a static pod and as an API pod, the logs tests' lines, a
// pseudo-terminal.

// kubectl runs the kubectl binary from the test control plane's directory with an admin
// kubeconfig.
type kubectl struct {
	path, kubeconfig, home string
}

func newKubectl(t *testing.T) *kubectl {
	t.Helper()
	path, err := env.Kubectl()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "admin.kubeconfig")
	require.NoError(t, testenv.WriteKubeconfig(kubeconfig, env.AdminConfig))
	// HOME keeps kubectl's discovery cache out of the real home directory.
	return &kubectl{path: path, kubeconfig: kubeconfig, home: dir}
}

// command is kubectl args, killed when ctx ends.
func (k *kubectl) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, k.path, append([]string{"--kubeconfig", k.kubeconfig}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+k.home)
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// kubectlResult is what one kubectl run printed and its exit code.
type kubectlResult struct {
	stdout, stderr string
	code           int
}

func (r kubectlResult) String() string {
	return fmt.Sprintf("exit code %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
}

// run runs kubectl args to its end (at most a minute) with stdin as its input.
func (k *kubectl) run(t *testing.T, stdin string, args ...string) kubectlResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := k.command(ctx, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(stdin), &stdout, &stderr
	err := cmd.Run()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		t.Fatalf("kubectl %s: %v (stderr %q)", strings.Join(args, " "), err, stderr.String())
	}
	require.NoError(t, ctx.Err(), "kubectl %s did not end within a minute", strings.Join(args, " "))
	return kubectlResult{stdout: stdout.String(), stderr: stderr.String(), code: cmd.ProcessState.ExitCode()}
}

// ok runs kubectl args and fails the test unless it exits 0; it returns stdout.
func (k *kubectl) ok(t *testing.T, args ...string) string {
	t.Helper()
	r := k.run(t, "", args...)
	require.Zero(t, r.code, "kubectl %s: %s", strings.Join(args, " "), r)
	return r.stdout
}

// okIn is ok within a require.EventuallyWithT condition: kubectl exiting non-zero (a
// container that has not started yet) fails that try, not the test.
func (k *kubectl) okIn(t *testing.T, c *assert.CollectT, args ...string) string {
	t.Helper()
	r := k.run(t, "", args...)
	require.Zero(c, r.code, "kubectl %s: %s", strings.Join(args, " "), r)
	return r.stdout
}

// start starts kubectl args; withStdin gives it a pipe as its input. The process is killed when
// the test ends, if it has not been stopped before.
func (k *kubectl) start(t *testing.T, withStdin bool, args ...string) *streaming {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	return startStreaming(t, k.command(ctx, args...), cancel, withStdin, "kubectl "+strings.Join(args, " "))
}

// kubectlPod is one pod as kubectl names it: a static pod's mirror or an API pod.
type kubectlPod struct {
	kind      string // "static" or "api", the subtest's name
	namespace string
	name      string
}

// args are kubectl's arguments naming the pod, after the verb.
func (p kubectlPod) args(more ...string) []string {
	return append([]string{"-n", p.namespace, p.name}, more...)
}

func (p kubectlPod) get(t require.TestingT) *corev1.Pod {
	got, err := env.Admin.CoreV1().Pods(p.namespace).Get(context.Background(), p.name, metav1.GetOptions{})
	require.NoError(t, err)
	return got
}

// runStaticAndAPI runs a pod on a's node twice — as static pod name from a manifest and as API
// pod name in a fresh namespace, with spec(kind) — and waits until both are Running with main
// running. Before the test ends both are removed and waited for until no process is left (what a
// failed test leaves, the clean-up of startProcessAgent kills).
func runStaticAndAPI(t *testing.T, a *agent, name string, spec func(kind string) corev1.PodSpec) []kubectlPod {
	t.Helper()
	ctx := context.Background()
	ns := env.Namespace(t)
	static := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       spec("static"),
	}
	api := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: spec("api")}
	api.Spec.NodeName = a.Node
	api.Spec.AutomountServiceAccountToken = ptr.To(false)

	t.Cleanup(func() {
		_ = a.Agent.RemoveManifest(name + ".json")
		_ = env.Admin.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{})
		podwait.Gone(t, env.Admin, metav1.NamespaceDefault, a.MirrorName(name), 30*time.Second)
		podwait.Gone(t, env.Admin, ns, name, 30*time.Second)
		a.noContainerProcesses(15 * time.Second)
	})
	a.writePod(static)
	_, err := env.Admin.CoreV1().Pods(ns).Create(ctx, api, metav1.CreateOptions{})
	require.NoError(t, err)

	pods := []kubectlPod{
		{kind: "static", namespace: metav1.NamespaceDefault, name: a.MirrorName(name)},
		{kind: "api", namespace: ns, name: name},
	}
	for _, p := range pods {
		podwait.Until(t, env.Admin, p.namespace, p.name, 60*time.Second, "Running", podwait.MainRunning)
	}
	return pods
}

// sameSpec is runStaticAndAPI's spec when both pods have the same.
func sameSpec(spec corev1.PodSpec) func(string) corev1.PodSpec {
	return func(string) corev1.PodSpec { return *spec.DeepCopy() }
}

// logLine is `line N of PID`, what the logs tests' container prints every 0.2 s.
var logLine = regexp.MustCompile(`^line (\d+) of (\d+)$`)

type counted struct{ n, pid int }

func parseLogLine(t require.TestingT, line string) counted {
	m := logLine.FindStringSubmatch(line)
	require.NotNil(t, m, "not a line the container prints: %q", line)
	n, _ := strconv.Atoi(m[1])
	pid, _ := strconv.Atoi(m[2])
	return counted{n: n, pid: pid}
}

// parseLogLines parses output (lines of logLine) and checks they are consecutive lines of one
// process.
func parseLogLines(t require.TestingT, output string) []counted {
	output = strings.TrimSuffix(output, "\n")
	if output == "" {
		return nil
	}
	var all []counted
	for i, line := range strings.Split(output, "\n") {
		c := parseLogLine(t, line)
		if i > 0 {
			require.Equal(t, counted{n: all[i-1].n + 1, pid: all[i-1].pid}, c, "line %d of %q", i, output)
		}
		all = append(all, c)
	}
	return all
}

// splitTimestamp splits a --timestamps line into its time and text.
func splitTimestamp(t require.TestingT, line string) (time.Time, string) {
	ts, text, ok := strings.Cut(line, " ")
	require.True(t, ok, "no timestamp: %q", line)
	at, err := time.Parse(time.RFC3339Nano, ts)
	require.NoError(t, err, "timestamp of %q", line)
	return at, text
}

// openPTY opens a pseudo-terminal of rows×cols: the test reads and types on master, terminal is
// kubectl's. Both are closed when the test ends.
func openPTY(t *testing.T, rows, cols uint16) (master, terminal *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { master.Close() })
	// Through SyscallConn, not Fd: Fd would make master blocking, and Close could no longer end
	// a Read.
	raw, err := master.SyscallConn()
	require.NoError(t, err)
	var n uint32
	var ioctlErr error
	require.NoError(t, raw.Control(func(fd uintptr) {
		if ioctlErr = unix.IoctlSetPointerInt(int(fd), unix.TIOCSPTLCK, 0); ioctlErr == nil {
			n, ioctlErr = unix.IoctlGetUint32(int(fd), unix.TIOCGPTN)
		}
	}))
	require.NoError(t, ioctlErr, "unlock the pseudo-terminal")
	terminal, err = os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|unix.O_NOCTTY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { terminal.Close() })
	require.NoError(t, unix.IoctlSetWinsize(int(terminal.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: rows, Col: cols}))
	return master, terminal
}
