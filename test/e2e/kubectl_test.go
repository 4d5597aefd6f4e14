package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/test/support/agentproc"
	"github.com/vk-static/vk-static/test/support/podwait"
	"github.com/vk-static/vk-static/test/support/syncbuf"
	"github.com/vk-static/vk-static/test/support/testenv"
)

// kubectl itself — logs, exec, cp, attach, port-forward, with and without a terminal — as an
// admin user, through the real API server to an agent with --provider process, on a static pod
// (through its mirror) and on an API pod with the same spec. Each test has its own agent, so
// they run in parallel; each removes its pods and waits until no container process is left.
// kubectl comes from `make kubectl` (part of `make testbin`); without it these tests fail.

// kubectl logs: all of it, --tail, --timestamps, --limit-bytes, --since, -f (the first lines,
// then lines as they are printed, and the end when the process ends), and --previous after the
// container's process was killed and restarted.
func TestKubectlLogs(t *testing.T) {
	t.Parallel()
	k := newKubectl(t)
	a := startProcessAgent(t)
	pods := runStaticAndAPI(t, a, "printer", sameSpec(corev1.PodSpec{
		TerminationGracePeriodSeconds: ptr.To[int64](1),
		Containers: []corev1.Container{{Name: "main", Image: "busybox",
			// Each instance prints a number of its own, which tells it from the one before: its
			// pid would not, in a PID namespace of its own (an API pod's), where it is 1.
			// $$ is $ after the kubelet's $(VAR) expansion.
			Command: shell(`id=$$(od -An -N4 -tu4 /dev/urandom | tr -d ' '); i=0; while true; do i=$((i+1)); echo "line $i of $$id"; sleep 0.2; done`)},
			// A log that no longer grows, for --tail's exact lines.
			{Name: "fifty", Image: "busybox",
				Command: shell(`id=$$(od -An -N4 -tu4 /dev/urandom | tr -d ' '); i=0; while [ $i -lt 50 ]; do i=$((i+1)); echo "line $i of $$id"; done; exec sleep 3600`)}},
	}))
	for _, p := range pods {
		t.Run(p.kind, func(t *testing.T) {
			logsOf := func(container string, more ...string) string {
				t.Helper()
				return k.ok(t, append([]string{"logs"}, p.args(append([]string{"-c", container}, more...)...)...)...)
			}
			logs := func(more ...string) string { t.Helper(); return logsOf("main", more...) }
			logsIn := func(c *assert.CollectT, container string) string {
				t.Helper()
				return k.okIn(t, c, append([]string{"logs"}, p.args("-c", container)...)...)
			}

			// --tail: the last lines only; --tail=0 none.
			require.EventuallyWithT(t, func(c *assert.CollectT) {
				assert.Len(c, parseLogLines(c, logsIn(c, "fifty")), 50)
			}, 30*time.Second, 200*time.Millisecond, "fifty lines logged")
			tail := parseLogLines(t, logsOf("fifty", "--tail=3"))
			require.Len(t, tail, 3, "--tail=3: %v", tail)
			assert.Equal(t, 48, tail[0].n, "--tail=3: %v", tail)
			assert.Empty(t, logsOf("fifty", "--tail=0"))

			// All of it: consecutive lines from the first, of one process.
			var first []counted
			require.EventuallyWithT(t, func(c *assert.CollectT) {
				first = parseLogLines(c, logsIn(c, "main"))
				require.GreaterOrEqual(c, len(first), 10, "lines so far")
			}, 30*time.Second, 200*time.Millisecond, "ten lines logged")
			require.Equal(t, 1, first[0].n, "the logs start with the first line")
			pid := first[0].pid

			// --tail on a growing log: three lines, the last when it was asked — not more,
			// even when more are printed while they are read.
			tail = parseLogLines(t, logs("--tail=3"))
			require.Len(t, tail, 3, "--tail=3: %v", tail)
			assert.Greater(t, tail[0].n, first[len(first)-1].n-3, "--tail=3 gave older lines: %v", tail)

			// --timestamps: each line with the time it was printed, in order.
			var last time.Time
			stamped := strings.Split(strings.TrimSuffix(logs("--timestamps"), "\n"), "\n")
			require.GreaterOrEqual(t, len(stamped), len(first))
			for i, line := range stamped {
				at, text := splitTimestamp(t, line)
				assert.Equal(t, counted{n: i + 1, pid: pid}, parseLogLine(t, text))
				assert.False(t, at.Before(last), "timestamps go back: %q after %s", line, last)
				assert.WithinDuration(t, time.Now(), at, time.Minute, "timestamp of %q", line)
				last = at
			}

			// --limit-bytes: that many bytes, even mid-line.
			assert.Equal(t, "line 1 o", logs("--limit-bytes=8"))

			// --since: only what was printed in the last seconds.
			asked := time.Now()
			since := strings.Split(strings.TrimSuffix(logs("--since=1s", "--timestamps"), "\n"), "\n")
			require.NotEmpty(t, since)
			for _, line := range since {
				at, text := splitTimestamp(t, line)
				assert.True(t, at.After(asked.Add(-2*time.Second)), "--since=1s asked at %s gave %q", asked, line)
				assert.Greater(t, parseLogLine(t, text).n, first[len(first)-1].n-5, "--since=1s gave an old line %q", line)
			}

			// -f: the lines from the first, then lines printed after kubectl started, as they come.
			shown := len(parseLogLines(t, logs()))
			follow := k.start(t, false, append([]string{"logs", "-f"}, p.args("-c", "main")...)...)
			for want := 1; want <= shown+5; want++ {
				line := follow.next(t, 10*time.Second)
				assert.Equal(t, counted{n: want, pid: pid}, parseLogLine(t, line), "followed line %d", want)
			}
			follow.stop()

			// --previous: an error while there is no previous instance ...
			r := k.run(t, "", append([]string{"logs", "--previous"}, p.args("-c", "main")...)...)
			assert.NotZero(t, r.code, "--previous with no restart yet: %s", r)
			assert.Contains(t, r.stderr, "previous terminated container", "%s", r)

			// ... then, once the process was killed and the container restarted, the logs of
			// the process before; the current logs start again at line 1 in another process.
			cs := podwait.MainStatus(p.get(t))
			w, err := agentproc.ContainerWorkload(a.Dir, cs.ContainerID)
			require.NoError(t, err)
			require.NotZero(t, w.Pid)
			before := parseLogLines(t, logs())
			// A follower open when the process ends: its stream ends with it, kubectl exits 0.
			follow = k.start(t, false, append([]string{"logs", "-f", "--tail=1"}, p.args("-c", "main")...)...)
			parseLogLine(t, follow.next(t, 10*time.Second))
			require.NoError(t, syscall.Kill(-w.Pid, syscall.SIGKILL))
			followed, code := follow.end(t, 20*time.Second)
			assert.Zero(t, code, "kubectl logs -f after the container ended; stderr %q", follow.stderr.String())
			for _, line := range followed {
				assert.Equal(t, pid, parseLogLine(t, line).pid, "the follower went on to another instance")
			}
			podwait.Until(t, env.Admin, p.namespace, p.name, 30*time.Second, "restarted", func(pod *corev1.Pod) error {
				cs := podwait.MainStatus(pod)
				if cs == nil || cs.RestartCount != 1 || cs.State.Running == nil {
					return fmt.Errorf("main %s", podwait.Describe(cs))
				}
				return nil
			})
			previous := parseLogLines(t, logs("--previous"))
			require.GreaterOrEqual(t, len(previous), len(before), "--previous: %v", previous)
			assert.Equal(t, before, previous[:len(before)], "--previous is not the killed process's logs")
			require.EventuallyWithT(t, func(c *assert.CollectT) {
				current := parseLogLines(c, logsIn(c, "main"))
				require.NotEmpty(c, current)
				assert.Equal(c, 1, current[0].n)
				assert.NotEqual(c, pid, current[0].pid, "the current logs are the killed process's")
			}, 10*time.Second, 200*time.Millisecond, "the restarted container's logs")
		})
	}
}

// kubectl exec: the container's environment, user and working directory; stdin piped with -i;
// the command's exit code passed through; a clear error for a command or container that is not
// there or not running; kubectl cp; -it from a terminal.
func TestKubectlExec(t *testing.T) {
	t.Parallel()
	k := newKubectl(t)
	a := startProcessAgent(t)
	pods := runStaticAndAPI(t, a, "shell", sameSpec(corev1.PodSpec{
		TerminationGracePeriodSeconds: ptr.To[int64](1),
		InitContainers:                []corev1.Container{{Name: "setup", Image: "busybox", Command: shell("true")}},
		Containers: []corev1.Container{{Name: "main", Image: "busybox",
			Command:    shell(`exec sleep 3600`),
			WorkingDir: "/var",
			Env:        []corev1.EnvVar{{Name: "GREETING", Value: "hello from the spec"}},
		}},
	}))
	host, err := os.Hostname()
	require.NoError(t, err)
	for _, p := range pods {
		t.Run(p.kind, func(t *testing.T) {
			kexec := func(stdin string, more ...string) kubectlResult {
				t.Helper()
				return k.run(t, stdin, append([]string{"exec"}, p.args(more...)...)...)
			}
			// The container's environment, user and working directory. The pod names no user:
			// a static pod runs as root, an API pod as the default user (nobody).
			uid := map[string]string{"static": "0", "api": "65534"}[p.kind]
			r := kexec("", "-c", "main", "--", "sh", "-c", `echo "$GREETING"; echo "$HOSTNAME"; id -u; pwd`)
			require.Zero(t, r.code, "%s", r)
			assert.Equal(t, "hello from the spec\n"+host+"\n"+uid+"\n/var\n", r.stdout, "%s", r)

			// -i: stdin reaches the command, all of it, and its output comes back.
			var input strings.Builder
			for i := 0; input.Len() < 256<<10; i++ {
				fmt.Fprintf(&input, "input line %d\n", i)
			}
			r = kexec(input.String(), "-i", "-c", "main", "--", "cat")
			require.Zero(t, r.code, "exit code %d, stderr %q", r.code, r.stderr)
			assert.True(t, r.stdout == input.String(), "cat gave back %d bytes of %d", len(r.stdout), input.Len())

			// stderr comes back apart from stdout, and the exit code through kubectl's.
			r = kexec("", "-c", "main", "--", "sh", "-c", `echo out; echo err >&2; exit 7`)
			assert.Equal(t, 7, r.code, "%s", r)
			assert.Equal(t, "out\n", r.stdout, "%s", r)
			assert.Contains(t, r.stderr, "err\n", "%s", r)
			assert.Contains(t, r.stderr, "command terminated with exit code 7", "%s", r)

			// A command that does not exist.
			r = kexec("", "-c", "main", "--", "no-such-command")
			assert.NotZero(t, r.code, "%s", r)
			assert.Contains(t, r.stderr, "no-such-command", "%s", r)
			t.Logf("kubectl %s", strings.TrimSpace(r.stderr))

			// A container the pod does not have: the API server says so.
			r = kexec("", "-c", "nope", "--", "true")
			assert.NotZero(t, r.code, "%s", r)
			assert.Contains(t, r.stderr, `container nope is not valid`, "%s", r)
			t.Logf("kubectl %s", strings.TrimSpace(r.stderr))

			// A container the pod has but that does not run (its init container, done): the
			// agent says so.
			r = kexec("", "-c", "setup", "--", "true")
			assert.NotZero(t, r.code, "%s", r)
			assert.Contains(t, r.stderr, "setup", "%s", r)
			assert.Regexp(t, `not (found|running)`, r.stderr, "%s", r)
			t.Logf("kubectl %s", strings.TrimSpace(r.stderr))

			// kubectl cp (tar through exec) both ways: out of the container, and into a
			// directory the container's user may write, where the file is then the user's.
			local := filepath.Join(t.TempDir(), "hostname")
			k.ok(t, "cp", "-c", "main", p.namespace+"/"+p.name+":/etc/hostname", local)
			want, err := os.ReadFile("/etc/hostname")
			require.NoError(t, err)
			got, err := os.ReadFile(local)
			require.NoError(t, err)
			assert.Equal(t, string(want), string(got), "kubectl cp out of the container")
			shared := sharedDir(t)
			require.NoError(t, os.Chmod(shared, 0o777))
			require.NoError(t, os.WriteFile(local, []byte(input.String()), 0o644))
			k.ok(t, "cp", "-c", "main", local, p.namespace+"/"+p.name+":"+shared+"/copied")
			got, err = os.ReadFile(filepath.Join(shared, "copied"))
			require.NoError(t, err, "kubectl cp into the container")
			assert.True(t, string(got) == input.String(), "kubectl cp in: %d bytes of %d", len(got), input.Len())
			if fi, err := os.Stat(filepath.Join(shared, "copied")); assert.NoError(t, err) {
				assert.Equal(t, uid, fmt.Sprint(fi.Sys().(*syscall.Stat_t).Uid), "the copied file's owner")
			}

			// -it from a terminal: the command gets a terminal of its own with kubectl's size,
			// what is typed reaches it, and the exit code comes back.
			execInTerminal(t, k, p)

			// None of it disturbed the container.
			cs := podwait.MainStatus(p.get(t))
			assert.Zero(t, cs.RestartCount, "%s", podwait.Describe(cs))
			assert.NotNil(t, cs.State.Running, "%s", podwait.Describe(cs))
		})
	}
}

// execInTerminal runs kubectl exec -it on a pseudo-terminal of 33 rows and 101 columns, as a
// user at a terminal would.
func execInTerminal(t *testing.T, k *kubectl, p kubectlPod) {
	t.Helper()
	master, terminal := openPTY(t, 33, 101)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := k.command(ctx, append([]string{"exec", "-it"}, p.args("-c", "main", "--",
		"sh", "-c", `tty; stty size; read -r line; echo "typed: $line"; exit 3`)...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = terminal, terminal, terminal
	require.NoError(t, cmd.Start())
	var screen syncbuf.Buffer
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(&screen, master) // ends when the terminal or master is closed
	}()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Contains(c, screen.String(), "33 101\r\n", "stty size")
	}, 30*time.Second, 100*time.Millisecond, "the command's terminal has kubectl's size")
	_, err := master.Write([]byte("hello terminal\r")) // Enter, as a terminal sends it
	require.NoError(t, err)
	err = cmd.Wait()
	// With kubectl gone and the test's side of the terminal closed, master reads what is left,
	// then ends (EIO).
	terminal.Close()
	select {
	case <-copied:
	case <-time.After(10 * time.Second):
		master.Close()
		<-copied
	}
	out := screen.String()
	var exitErr *exec.ExitError
	require.ErrorAs(t, err, &exitErr, "screen %q", out)
	assert.Equal(t, 3, exitErr.ExitCode(), "screen %q", out)
	assert.Regexp(t, `^/dev/pts/\d+\r\n`, out, "tty: the command has no terminal")
	assert.Contains(t, out, "typed: hello terminal\r\n")
	assert.Contains(t, out, "command terminated with exit code 3")
}

// kubectl attach -i to a container with stdin: what is typed reaches its process, and what it
// prints comes back on kubectl's output and is in its logs. Detaching leaves it running, and a
// second attach reaches the same process.
func TestKubectlAttach(t *testing.T) {
	t.Parallel()
	k := newKubectl(t)
	a := startProcessAgent(t)
	pods := runStaticAndAPI(t, a, "echoer", sameSpec(corev1.PodSpec{
		TerminationGracePeriodSeconds: ptr.To[int64](1),
		Containers: []corev1.Container{{Name: "main", Image: "busybox", Stdin: true,
			Command: shell(`echo "ready $$$$"; while read -r line; do echo "got: $line from $$$$"; done; echo "stdin ended"`)},
			{Name: "term", Image: "busybox", Stdin: true, TTY: true,
				Command: shell(`while read -r line; do echo "got: $line"; echo "size: $(stty size)"; done`)}},
	}))
	for _, p := range pods {
		t.Run(p.kind, func(t *testing.T) {
			var pid string
			require.EventuallyWithT(t, func(c *assert.CollectT) {
				logs := k.okIn(t, c, append([]string{"logs"}, p.args("-c", "main")...)...)
				first, _, _ := strings.Cut(logs, "\n")
				var ok bool
				pid, ok = strings.CutPrefix(first, "ready ")
				require.True(c, ok, "logs %q", logs)
				_, err := strconv.Atoi(pid)
				assert.NoError(c, err, "logs %q", logs)
			}, 20*time.Second, 200*time.Millisecond, "the container is reading")

			for i := 1; i <= 2; i++ {
				attach := k.start(t, true, append([]string{"attach", "-i"}, p.args("-c", "main")...)...)
				word := fmt.Sprintf("hello-%s-%d", p.kind, i)
				want := "got: " + word + " from " + pid
				// Typed at once: the pipe holds it until kubectl has the attach up and reads it.
				_, err := fmt.Fprintln(attach.stdin, word)
				require.NoError(t, err)
				attach.until(t, 20*time.Second, fmt.Sprintf("%q", want), func(line string) bool { return line == want })
				attach.stop()
				logs := k.ok(t, append([]string{"logs"}, p.args("-c", "main")...)...)
				assert.Contains(t, logs, want+"\n", "what was typed is not in the logs")
			}
			cs := podwait.MainStatus(p.get(t))
			assert.Zero(t, cs.RestartCount, "detaching restarted the container: %s", podwait.Describe(cs))
			logs := k.ok(t, append([]string{"logs"}, p.args("-c", "main")...)...)
			assert.NotContains(t, logs, "stdin ended", "detaching closed the container's stdin")

			attachInTerminal(t, k, p)
		})
	}
}

// attachInTerminal runs kubectl attach -it on a pseudo-terminal of 25 rows and 90 columns to
// container term, which has a terminal: what is typed reaches it, its terminal takes kubectl's
// size, and what it prints comes back.
func attachInTerminal(t *testing.T, k *kubectl, p kubectlPod) {
	t.Helper()
	master, terminal := openPTY(t, 25, 90)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := k.command(ctx, append([]string{"attach", "-it"}, p.args("-c", "term")...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = terminal, terminal, terminal
	require.NoError(t, cmd.Start())
	var screen syncbuf.Buffer
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(&screen, master) // ends when the terminal or master is closed
	}()
	// kubectl says to press Enter just before it attaches: what is typed before goes nowhere.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Contains(c, screen.String(), "try pressing enter")
	}, 30*time.Second, 100*time.Millisecond, "kubectl attach -it is up")
	// Typed again at each poll until it comes back (a line typed in the moment before the
	// attach is up is lost, as it is for a user).
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		out := screen.String()
		read := assert.Contains(c, out, "got: hello terminal\r\n")
		sized := assert.Contains(c, out, "size: 25 90\r\n")
		if !read || !sized {
			_, err := master.Write([]byte("hello terminal\r"))
			require.NoError(c, err)
		}
	}, 30*time.Second, 500*time.Millisecond, "the container reads what is typed on its terminal, of kubectl's size")
	cancel()
	_ = cmd.Wait()
	terminal.Close()
	select {
	case <-copied:
	case <-time.After(10 * time.Second):
		master.Close()
		<-copied
	}
	pod := p.get(t)
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == "term" {
			assert.Zero(t, cs.RestartCount, "detaching restarted the container: %s", podwait.Describe(&cs))
			assert.NotNil(t, cs.State.Running, "%s", podwait.Describe(&cs))
		}
	}
}

// kubectl port-forward pod/NAME LOCAL:PORT to a container's HTTP server on 127.0.0.1: requests
// to the local port get the container's answers.
func TestKubectlPortForward(t *testing.T) {
	t.Parallel()
	k := newKubectl(t)
	a := startProcessAgent(t)
	// Each pod listens on a port of its own: they share the host's network.
	var ports [2]int
	for i := range ports {
		var err error
		ports[i], err = testenv.FreePort()
		require.NoError(t, err)
	}
	// The server is the tests' workload program: it answers "hello from WHO at PATH".
	who := map[string]string{"static": "the static pod", "api": "the API pod"}
	port := map[string]int{"static": ports[0], "api": ports[1]}
	spec := func(kind string) corev1.PodSpec {
		return corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers: []corev1.Container{{Name: "main", Image: "workload",
				Command: []string{workloadBinary, "serve", "--port", strconv.Itoa(port[kind]), "--bind", "127.0.0.1", "--name", who[kind]},
				ReadinessProbe: &corev1.Probe{
					ProbeHandler:  corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(int32(port[kind]))}},
					PeriodSeconds: 1,
				},
			}},
		}
	}
	for _, p := range runStaticAndAPI(t, a, "web", spec) {
		t.Run(p.kind, func(t *testing.T) {
			podwait.Until(t, env.Admin, p.namespace, p.name, 30*time.Second, "Ready", func(p *corev1.Pod) error {
				if podReady(p) != corev1.ConditionTrue {
					return fmt.Errorf("not Ready")
				}
				return nil
			})
			local, err := testenv.FreePort()
			require.NoError(t, err)
			forward := k.start(t, false, "port-forward", "-n", p.namespace, "pod/"+p.name,
				"--address", "127.0.0.1", fmt.Sprintf("%d:%d", local, port[p.kind]))
			forward.until(t, 30*time.Second, "Forwarding from", func(line string) bool {
				return strings.HasPrefix(line, "Forwarding from 127.0.0.1:"+strconv.Itoa(local))
			})
			client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
			for _, path := range []string{"/first", "/second"} {
				resp, err := client.Get(fmt.Sprintf("http://127.0.0.1:%d%s", local, path))
				require.NoError(t, err, "GET %s through the forwarded port; kubectl stderr %q", path, forward.stderr.String())
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				require.NoError(t, err)
				assert.Equal(t, http.StatusOK, resp.StatusCode)
				assert.Equal(t, "hello from "+who[p.kind]+" at "+path+"\n", string(body))
			}
			forward.stop()

			// A port nothing listens on: the request gets no answer, and kubectl says why.
			unused, err := testenv.FreePort()
			require.NoError(t, err)
			local, err = testenv.FreePort()
			require.NoError(t, err)
			forward = k.start(t, false, "port-forward", "-n", p.namespace, "pod/"+p.name,
				"--address", "127.0.0.1", fmt.Sprintf("%d:%d", local, unused))
			forward.until(t, 30*time.Second, "Forwarding from", func(line string) bool {
				return strings.HasPrefix(line, "Forwarding from 127.0.0.1:"+strconv.Itoa(local))
			})
			resp, err := client.Get(fmt.Sprintf("http://127.0.0.1:%d/", local))
			if err == nil {
				resp.Body.Close()
				t.Fatalf("GET through a forward to port %d, where nothing listens: %s", unused, resp.Status)
			}
			require.EventuallyWithT(t, func(c *assert.CollectT) {
				stderr := forward.stderr.String()
				assert.Contains(c, stderr, fmt.Sprintf("an error occurred forwarding %d -> %d", local, unused))
				// The process provider connects only to what the pod's own processes listen on.
				assert.Contains(c, stderr, fmt.Sprintf("port-forward to port %d: no process of pod %s/%s listens on it", unused, p.namespace, p.name))
			}, 10*time.Second, 100*time.Millisecond, "kubectl reports the refused connection")
			t.Logf("kubectl port-forward to an unused port: %s", strings.TrimSpace(forward.stderr.String()))
			forward.stop()
		})
	}
}
