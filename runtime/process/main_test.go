package process

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"testing"

	"go.uber.org/goleak"

	"github.com/vk-static/vk-static/lifecycle"
	"github.com/vk-static/vk-static/provider"
	"github.com/vk-static/vk-static/test/support/netns"
	"github.com/vk-static/vk-static/test/support/syncbuf"
)

// The test binary plays three more parts, chosen by environment variables, before any test
// runs: a container's supervisor, an agent that starts a container and is then killed
// (agentChildEnv), and a TCP echo server run as a container (echoServerEnv).
const (
	agentChildEnv = "PROCESS_TEST_AGENT_STATE_DIR"
	echoServerEnv = "PROCESS_TEST_ECHO_ADDR"
)

func TestMain(m *testing.M) {
	RunSupervisorIfRequested()
	if dir := os.Getenv(agentChildEnv); dir != "" {
		os.Exit(agentChild(dir))
	}
	if dir := os.Getenv(rootlessAgentEnv); dir != "" {
		os.Exit(rootlessAgent(dir))
	}
	if addr := os.Getenv(echoServerEnv); addr != "" {
		os.Exit(echoServer(addr))
	}
	if netns.InChild() {
		// A test that makes a pod network (TestPodNetwork) runs again in a network namespace
		// of its own: the bridge and portmap's rules never touch the machine's.
		if err := netns.Enter(netns.NodeIP); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	if _, ok := os.LookupEnv("GORACE"); !ok {
		// Supervisors are this binary; with the race detector each would sleep a second as it
		// exits.
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	goleak.VerifyTestMain(m)
}

// agentChild starts a container that writes a line every 20ms, prints its id, and waits to be
// killed.
func agentChild(dir string) int {
	r, err := New(Config{StateDir: dir})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	ctx := context.Background()
	sb, err := r.RunSandbox(ctx, &lifecycle.SandboxConfig{Namespace: "ns", Name: "agent-child"})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	id, err := r.CreateContainer(ctx, sb, &lifecycle.ContainerConfig{
		Name:    "ticker",
		Command: []string{"sh", "-c", "while :; do echo tick; sleep 0.02; done"},
		LogPath: dirLog(dir),
	})
	if err == nil {
		err = r.StartContainer(ctx, id)
	}
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println(id)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch)
	for range ch { // only SIGKILL ends this
	}
	return 0
}

func dirLog(dir string) string { return dir + "/ticker.log" }

// echoServer answers every connection with what it sends, until it closes.
func echoServer(addr string) int {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("listening")
	for {
		c, err := l.Accept()
		if err != nil {
			return 1
		}
		go func() {
			defer c.Close()
			sc := bufio.NewScanner(c)
			for sc.Scan() {
				fmt.Fprintf(c, "echo: %s\n", sc.Text())
			}
		}()
	}
}

// testAttachIO is a provider.AttachIO over buffers.
type testAttachIO struct {
	stdin          io.Reader
	stdout, stderr *syncbuf.Buffer
	tty            bool
	resize         chan provider.TermSize
}

func (a *testAttachIO) Stdin() io.Reader { return a.stdin }
func (a *testAttachIO) Stdout() io.WriteCloser {
	if a.stdout == nil {
		return nil
	}
	return a.stdout
}
func (a *testAttachIO) Stderr() io.WriteCloser {
	if a.stderr == nil {
		return nil
	}
	return a.stderr
}
func (a *testAttachIO) TTY() bool                        { return a.tty }
func (a *testAttachIO) Resize() <-chan provider.TermSize { return a.resize }
