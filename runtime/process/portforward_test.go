package process

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vk-static/vk-static/lifecycle"
	"github.com/vk-static/vk-static/podutil"
	"github.com/vk-static/vk-static/provider"
	"github.com/vk-static/vk-static/runtime/process/internal/procfs"
	"github.com/vk-static/vk-static/test/support/syncbuf"
)

// hostListener is a host service that is no pod's (the agent's healthz, say), on loopback: the
// test's own listener. accepted receives each connection it gets.
func hostListener(t *testing.T) (port int, accepted <-chan struct{}) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ch := make(chan struct{}, 16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
	})
	return l.Addr().(*net.TCPAddr).Port, ch
}

// freePort is a port nothing listens on at the moment, for a container's listener.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	return port
}

// forwardFails port-forwards to port of the sandbox and requires it to fail without reaching
// the host listener (accepted; nil for none): the code before the pod's listeners were checked
// connected.
func forwardFails(t *testing.T, r *Runtime, sandboxID string, port int, accepted <-chan struct{}) error {
	t.Helper()
	client, server := net.Pipe()
	defer client.Close()
	done := make(chan error, 1)
	go func() { done <- r.PortForward(context.Background(), sandboxID, int32(port), server) }()
	select {
	case err := <-done:
		require.Error(t, err)
		select {
		case <-accepted:
			t.Errorf("port-forward to port %d reached the host's listener", port)
		default:
		}
		return err
	case <-accepted:
		client.Close()
		<-done
		t.Fatalf("port-forward to port %d reached the host's listener, which is no process of the pod's", port)
	case <-time.After(waitFor):
		client.Close()
		<-done
		t.Fatalf("port-forward to port %d did not fail: it connected", port)
	}
	return nil
}

// forwardEchoes port-forwards to port of the sandbox and requires the echo server's answer.
func forwardEchoes(t *testing.T, r *Runtime, sandboxID string, port int) {
	t.Helper()
	client, server := net.Pipe()
	done := make(chan error, 1)
	go func() { done <- r.PortForward(context.Background(), sandboxID, int32(port), server) }()
	require.NoError(t, client.SetDeadline(time.Now().Add(waitFor)))
	_, err := client.Write([]byte("ping\n"))
	if err != nil {
		client.Close()
		require.NoError(t, err, "port-forward: %v", <-done)
	}
	line, err := bufio.NewReader(client).ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "echo: ping\n", line)
	require.NoError(t, client.Close())
	require.NoError(t, <-done)
}

// waitListening waits until something answers on addr, the echo server of the container whose
// log is logPath.
func waitListening(t *testing.T, addr, logPath string) {
	t.Helper()
	if !assert.Eventually(t, func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	}, waitFor, tick) {
		t.Fatalf("nothing listens on %s; the container's log: %+v", addr, readLog(t, logPath))
	}
}

// Port-forward reaches only what the pod's own processes listen on: a host service on loopback
// (the agent's healthz and metrics, a local etcd) is not reachable through any pod.
func TestPortForwardReachesOnlyThePod(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	r := newTestRuntime(t, Config{})
	hostPort, accepted := hostListener(t)

	t.Run("a pod that listens on nothing", func(t *testing.T) {
		id := run(t, r, lifecycle.ContainerConfig{Command: []string{"sleep", "1000"}})
		sb := status(t, r, id).SandboxID
		err := forwardFails(t, r, sb, hostPort, accepted)
		assert.EqualError(t, err, fmt.Sprintf("port-forward to port %d: no process of pod ns/pod listens on it", hostPort))
		assert.ErrorIs(t, err, provider.ErrNotFound)
	})

	t.Run("an API pod that listens on nothing", func(t *testing.T) {
		sb, _ := runPod(t, r, true, "exec sleep 1000")
		err := forwardFails(t, r, sb, hostPort, accepted)
		assert.ErrorIs(t, err, provider.ErrNotFound)
	})

	t.Run("a pod with a port of its own", func(t *testing.T) {
		port := freePort(t)
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		id := run(t, r, lifecycle.ContainerConfig{Command: []string{self}, Env: []string{echoServerEnv + "=" + addr}, User: &lifecycle.User{}})
		waitListening(t, addr, status(t, r, id).LogPath)
		sb := status(t, r, id).SandboxID
		forwardEchoes(t, r, sb, port)
		err := forwardFails(t, r, sb, hostPort, accepted)
		assert.ErrorIs(t, err, provider.ErrNotFound)
	})

	t.Run("a pod whose container has ended", func(t *testing.T) {
		id := run(t, r, lifecycle.ContainerConfig{Command: []string{"true"}})
		waitExited(t, r, id)
		forwardFails(t, r, status(t, r, id).SandboxID, hostPort, accepted)
	})

	t.Run("not a port", func(t *testing.T) {
		id := run(t, r, lifecycle.ContainerConfig{Command: []string{"sleep", "1000"}})
		client, server := net.Pipe()
		defer client.Close()
		err := r.PortForward(context.Background(), status(t, r, id).SandboxID, 70000, server)
		assert.True(t, provider.IsInvalidInput(err), "%v", err)
	})
}

// A listener in a process the workload started is the pod's: one in its session always, one
// that left the session (setsid) and an exec'd command's through the container's cgroup.
// Without a cgroup an exec'd command (a session of its own) is not found. A static pod's own
// ports are reachable as an API pod's are; the API pod runs restricted (a PID namespace and a
// /tmp of its own, where the test binary is not: its echo server is perl's).
func TestPortForwardPodProcesses(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	perl, _ := exec.LookPath("perl")
	for _, tc := range []struct {
		name      string
		api       bool // an API pod, restricted; else a static pod
		cgroups   bool
		script    string // the workload, with $SELF the test binary's echo server, $PERL_ECHO perl's
		exec      bool   // the echo server is exec'd in the container, which sleeps
		reachable bool
	}{
		{name: "a child in the session", script: `"$SELF" & wait`, reachable: true},
		{name: "an exec without a cgroup", exec: true},
		{name: "a child in the session, with a cgroup", cgroups: true, script: `"$SELF" & wait`, reachable: true},
		{name: "a child that called setsid, with a cgroup", cgroups: true, script: `setsid "$SELF" & wait`, reachable: true},
		{name: "an exec with a cgroup", cgroups: true, exec: true, reachable: true},
		{name: "an API pod's child in the session", api: true, script: `perl -MIO::Socket::INET -e "$PERL_ECHO" & wait`, reachable: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r *Runtime
			if tc.cgroups {
				r, _ = cgroupRuntime(t, 0)
			} else {
				r = newTestRuntime(t, Config{})
			}
			port := freePort(t)
			addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
			if tc.api && perl == "" {
				t.Skip("no perl: the echo server of a restricted pod")
			}
			script := tc.script
			if tc.exec {
				script = "exec sleep 1000"
			}
			sb, id := runPod(t, r, tc.api, script, echoServerEnv+"="+addr, "SELF="+self, "PERL_ECHO="+perlEchoServer)
			if tc.cgroups {
				rec, err := r.loadContainer(id)
				require.NoError(t, err)
				require.NotEmpty(t, rec.Cgroups)
			}
			if tc.exec {
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() {
					done <- r.Exec(ctx, id, []string{self}, &testAttachIO{stdout: &syncbuf.Buffer{}, stderr: &syncbuf.Buffer{}})
				}()
				t.Cleanup(func() {
					cancel()
					<-done
				})
			}
			waitListening(t, addr, status(t, r, id).LogPath)
			if tc.reachable {
				forwardEchoes(t, r, sb, port)
				return
			}
			assert.ErrorIs(t, forwardFails(t, r, sb, port, nil), provider.ErrNotFound)
		})
	}
}

// perlEchoServer is echoServer in perl (perl -MIO::Socket::INET -e), for a restricted pod.
const perlEchoServer = `my $l = IO::Socket::INET->new(LocalAddr => $ENV{` + echoServerEnv + `}, Listen => 5, ReuseAddr => 1) or die "listen: $!";
print "listening\n";
while (my $c = $l->accept) { while (my $line = <$c>) { print $c "echo: $line" } close $c }`

// runPod runs script (sh -c) with env in the container of a new pod, which has a cgroup when
// the runtime has cgroups: a static pod run as root (the echo server is the test binary, in a
// directory only its owner may enter), or an API pod run as nobody. It is stopped and removed
// when the test ends.
func runPod(t *testing.T, r *Runtime, api bool, script string, env ...string) (sandboxID, id string) {
	t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: types.UID("uid-" + strconv.FormatInt(time.Now().UnixNano(), 36)),
		Annotations: map[string]string{podutil.ConfigSourceAnnotationKey: podutil.FileSource}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}}
	user := &lifecycle.User{}
	if api {
		pod.Annotations = nil
		user = &lifecycle.User{UID: 65534, GID: 65534}
	}
	sandboxID, err := r.RunSandbox(context.Background(), &lifecycle.SandboxConfig{PodUID: pod.UID, Namespace: "ns", Name: "p", Pod: pod})
	require.NoError(t, err)
	cfg := &lifecycle.ContainerConfig{Name: "c", Command: []string{"sh", "-c", script}, Env: append([]string{testPath}, env...), User: user,
		LogPath: filepath.Join(t.TempDir(), "c.log"), Pod: pod, Container: &pod.Spec.Containers[0]}
	id, err = r.CreateContainer(context.Background(), sandboxID, cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		if err := r.StopContainer(ctx, id, 0); err != nil {
			t.Errorf("stop container %s: %v", id, err)
		}
		_ = r.RemoveContainer(ctx, id)
		_ = r.StopSandbox(ctx, sandboxID)
		_ = r.RemoveSandbox(ctx, sandboxID)
	})
	require.NoError(t, r.StartContainer(context.Background(), id))
	return sandboxID, id
}

// The addresses dialed for the pod's listeners, and those left out where a listener outside the
// pod could take the connection.
func TestPortForwardDialAddrs(t *testing.T) {
	l := func(s string) procfs.Listener { return procfs.Listener{Addr: netip.MustParseAddrPort(s)} }
	ls := func(s ...string) []procfs.Listener {
		var out []procfs.Listener
		for _, a := range s {
			out = append(out, l(a))
		}
		return out
	}
	for _, tc := range []struct {
		name        string
		own, others []procfs.Listener
		want        []string
	}{
		{"loopback", ls("127.0.0.1:80"), nil, []string{"127.0.0.1:80"}},
		{"a node address", ls("10.1.2.3:80"), nil, []string{"10.1.2.3:80"}},
		{"IPv4 wildcard", ls("0.0.0.0:80"), nil, []string{"127.0.0.1:80"}},
		{"IPv6 wildcard", ls("[::]:80"), nil, []string{"[::1]:80", "127.0.0.1:80"}},
		{"IPv6 loopback", ls("[::1]:80"), nil, []string{"[::1]:80"}},
		{"both wildcards, each once", ls("0.0.0.0:80", "[::]:80"), nil, []string{"127.0.0.1:80", "[::1]:80"}},
		{"another's on another address", ls("127.0.0.1:80"), ls("10.1.2.3:80", "127.0.0.2:80"), []string{"127.0.0.1:80"}},
		{"another's on the wildcard loses to the pod's bound one", ls("127.0.0.1:80"), ls("0.0.0.0:80", "[::]:80"), []string{"127.0.0.1:80"}},
		{"another's on the same address (SO_REUSEPORT)", ls("127.0.0.1:80"), ls("127.0.0.1:80"), nil},
		{"another's on loopback beats the pod's wildcard", ls("0.0.0.0:80"), ls("127.0.0.1:80"), nil},
		{"another's on IPv6 loopback: IPv4 only", ls("[::]:80"), ls("[::1]:80"), []string{"127.0.0.1:80"}},
		{"another's on the IPv4 wildcard: IPv6 only", ls("[::]:80"), ls("0.0.0.0:80"), []string{"[::1]:80"}},
		{"another's on the IPv6 wildcard: not guessed", ls("0.0.0.0:80"), ls("[::]:80"), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, a := range dialAddrs(tc.own, tc.others) {
				got = append(got, a.String())
			}
			assert.Equal(t, tc.want, got)
		})
	}
}
