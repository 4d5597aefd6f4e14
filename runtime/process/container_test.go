package process

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/vk-static/vk-static/lifecycle"
	"github.com/vk-static/vk-static/provider"
	"github.com/vk-static/vk-static/runtime/process/internal/protocol"
	"github.com/vk-static/vk-static/runtime/process/internal/records"
	"github.com/vk-static/vk-static/runtime/process/supervisor"
	"github.com/vk-static/vk-static/test/support/syncbuf"
)

func TestExitCodes(t *testing.T) {
	r := newTestRuntime(t, Config{})
	for _, tc := range []struct {
		name   string
		script string
		code   int32
	}{
		{"zero", "exit 0", 0},
		{"three", "exit 3", 3},
		{"killed by a signal", "kill -USR1 $$", 128 + 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := run(t, r, lifecycle.ContainerConfig{Command: []string{"sh", "-c", tc.script}})
			s := waitExited(t, r, id)
			assert.Equal(t, tc.code, s.ExitCode)
			assert.Empty(t, s.Reason)
			assert.False(t, s.StartedAt.IsZero())
			assert.False(t, s.FinishedAt.Before(s.StartedAt))
		})
	}
}

func TestStopSignalsTheGroup(t *testing.T) {
	r := newTestRuntime(t, Config{})
	events := make(chan lifecycle.ContainerEvent, 10)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r.NotifyContainers(ctx, func(ev lifecycle.ContainerEvent) { events <- ev })

	id := run(t, r, lifecycle.ContainerConfig{Command: []string{"sleep", "1000"}, Labels: map[string]string{"k": "v"}})
	ev := <-events
	assert.Equal(t, lifecycle.ContainerEvent{ContainerID: id, SandboxID: ev.SandboxID, Type: lifecycle.ContainerStartedEvent, Labels: map[string]string{"k": "v"}}, ev)
	s := status(t, r, id)
	require.Equal(t, lifecycle.ContainerRunning, s.State)
	assert.Equal(t, "v", s.Labels["k"])

	require.NoError(t, r.StopContainer(context.Background(), id, 10*time.Second))
	s = status(t, r, id)
	assert.Equal(t, lifecycle.ContainerExited, s.State)
	assert.Equal(t, int32(128+15), s.ExitCode)
	ev = <-events
	assert.Equal(t, lifecycle.ContainerExitedEvent, ev.Type)
	assert.Equal(t, id, ev.ContainerID)

	// Stopping again is fine; a running container cannot be removed, an exited one can.
	require.NoError(t, r.StopContainer(context.Background(), id, time.Second))
	require.NoError(t, r.RemoveContainer(context.Background(), id))
	_, err := r.ContainerStatus(context.Background(), id)
	assert.True(t, provider.IsNotFound(err), "%v", err)
	_, err = os.Stat(s.LogPath)
	assert.NoError(t, err, "the log stays")
}

func TestStopGraceThenKill(t *testing.T) {
	r := newTestRuntime(t, Config{})
	id := run(t, r, lifecycle.ContainerConfig{Command: []string{"sh", "-c", `trap "echo got TERM" TERM; echo ready; while :; do sleep 0.05; done`}})
	logPath := status(t, r, id).LogPath
	require.Eventually(t, func() bool { return len(logContents(t, logPath, "stdout")) > 0 }, waitFor, tick)
	grace := 300 * time.Millisecond
	start := time.Now()
	require.NoError(t, r.StopContainer(context.Background(), id, grace))
	assert.GreaterOrEqual(t, time.Since(start), grace)
	s := status(t, r, id)
	assert.Equal(t, int32(128+9), s.ExitCode)
	assert.Contains(t, logContents(t, logPath, "stdout"), "got TERM")
}

func TestRemoveRunningIsRefused(t *testing.T) {
	r := newTestRuntime(t, Config{})
	id := run(t, r, lifecycle.ContainerConfig{Command: []string{"sleep", "1000"}})
	assert.Error(t, r.RemoveContainer(context.Background(), id))
	assert.Error(t, r.StartContainer(context.Background(), id), "a container starts once")
}

func TestStartError(t *testing.T) {
	r := newTestRuntime(t, Config{})
	for _, tc := range []struct {
		name    string
		cfg     lifecycle.ContainerConfig
		message string
	}{
		{"no such executable", lifecycle.ContainerConfig{Command: []string{"nope"}}, `exec: "nope": executable file not found in $PATH`},
		{"no such path", lifecycle.ContainerConfig{Command: []string{"/no/such/file"}}, "no such file or directory"},
		{"no such working directory", lifecycle.ContainerConfig{Command: []string{"true"}, WorkingDir: "/no/such/dir"}, "working directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := create(t, r, tc.cfg)
			err := r.StartContainer(context.Background(), id)
			require.ErrorIs(t, err, ErrStartFailed)
			assert.Contains(t, err.Error(), tc.message)
			s := status(t, r, id)
			assert.Equal(t, lifecycle.ContainerExited, s.State)
			assert.Equal(t, int32(128), s.ExitCode)
			assert.Equal(t, "StartError", s.Reason)
			assert.Contains(t, s.Message, tc.message)
		})
	}
}

func TestLogHasStdoutAndStderr(t *testing.T) {
	r := newTestRuntime(t, Config{})
	id := run(t, r, lifecycle.ContainerConfig{Command: []string{"sh", "-c", "echo out1; echo err1 >&2; printf partial"}})
	s := waitExited(t, r, id)
	lines := readLog(t, s.LogPath)
	assert.Contains(t, lines, logLine{"stdout", "F", "out1"})
	assert.Contains(t, lines, logLine{"stderr", "F", "err1"})
	assert.Contains(t, logContents(t, s.LogPath, "stdout"), "partial")
}

func TestEnvWorkdirUser(t *testing.T) {
	requireRoot(t)
	r := newTestRuntime(t, Config{})
	// A working directory the users can enter (t.TempDir's parent is private).
	dir, err := os.MkdirTemp("", "workdir")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	for _, tc := range []struct {
		name string
		user *lifecycle.User
		want []string
		home string
	}{
		{"default user nobody", nil, []string{"65534", "65534"}, "home=/nonexistent"},
		{"explicit user", &lifecycle.User{UID: 1234, GID: 2345, SupplementalGroups: []int64{3456}}, []string{"1234", "2345", "2345 3456"}, "home=/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := run(t, r, lifecycle.ContainerConfig{
				Command:    []string{"sh", "-c", `echo "foo=$FOO"; pwd; id -u; id -g; id -G; echo "home=$HOME"`},
				Env:        []string{testPath, "FOO=bar baz"},
				WorkingDir: dir,
				User:       tc.user,
			})
			s := waitExited(t, r, id)
			require.Equal(t, int32(0), s.ExitCode, "%+v", readLog(t, s.LogPath))
			out := logContents(t, s.LogPath, "stdout")
			require.GreaterOrEqual(t, len(out), 4)
			assert.Equal(t, "foo=bar baz", out[0])
			assert.Equal(t, dir, out[1])
			assert.Equal(t, tc.want[0], out[2])
			assert.Equal(t, tc.want[1], out[3])
			if len(tc.want) > 2 {
				assert.Equal(t, tc.want[2], out[4])
			}
			assert.Equal(t, tc.home, out[len(out)-1])
		})
	}
}

func TestMounts(t *testing.T) {
	requireRoot(t)
	r := newTestRuntime(t, Config{})
	host := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(host, "data"), []byte("hello"), 0o644))
	require.NoError(t, os.Chmod(host, 0o777))
	target, roTarget := t.TempDir(), t.TempDir()
	hostFile := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(hostFile, []byte("a file"), 0o644))
	targetFile := filepath.Join(t.TempDir(), "target-file")
	require.NoError(t, os.WriteFile(targetFile, nil, 0o644))

	id := run(t, r, lifecycle.ContainerConfig{
		Command: []string{"sh", "-c", `cat $0/data; echo; cat $2; echo; echo w > $0/written && echo rw-ok; echo w > $1/written || echo ro-refused`, target, roTarget, targetFile},
		User:    &lifecycle.User{UID: 0, GID: 0},
		Mounts: []lifecycle.Mount{
			{HostPath: host, ContainerPath: target},
			{HostPath: host, ContainerPath: roTarget, ReadOnly: true},
			{HostPath: hostFile, ContainerPath: targetFile, ReadOnly: true},
		},
	})
	s := waitExited(t, r, id)
	out := logContents(t, s.LogPath, "stdout")
	assert.Equal(t, []string{"hello", "a file", "rw-ok", "ro-refused"}, out, "%+v", readLog(t, s.LogPath))
	data, err := os.ReadFile(filepath.Join(host, "written"))
	require.NoError(t, err, "the read-write mount writes through to the host path")
	assert.Equal(t, "w\n", string(data))
	entries, err := os.ReadDir(target)
	require.NoError(t, err)
	assert.Empty(t, entries, "the mount stays in the container's mount namespace")

	t.Run("missing mountPath", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "missing")
		id := create(t, r, lifecycle.ContainerConfig{Command: []string{"true"}, Mounts: []lifecycle.Mount{{HostPath: host, ContainerPath: missing}}})
		err := r.StartContainer(context.Background(), id)
		require.Error(t, err)
		s := status(t, r, id)
		assert.Equal(t, "StartError", s.Reason)
		assert.Equal(t, "mountPath "+missing+" does not exist on this host: the process provider mounts volumes over existing host paths (it creates missing ones only under /run/secrets)", s.Message)
		_, err = os.Stat(missing)
		assert.True(t, os.IsNotExist(err), "not created on the host")
	})

	// The service account token's mount point is the exception: /var/run/secrets/... is made.
	t.Run("missing mountPath under /var/run/secrets", func(t *testing.T) {
		if _, err := os.Stat("/var/run"); err != nil {
			t.Skip("no /var/run here")
		}
		top := filepath.Join("/var/run/secrets", "vk-static-test-"+strconv.Itoa(os.Getpid()))
		t.Cleanup(func() { os.RemoveAll(top) })
		missing := filepath.Join(top, "kubernetes.io", "serviceaccount")
		id := create(t, r, lifecycle.ContainerConfig{Command: []string{"cat", filepath.Join(missing, "hello")}, Mounts: []lifecycle.Mount{{HostPath: host, ContainerPath: missing, ReadOnly: true}}})
		require.NoError(t, os.WriteFile(filepath.Join(host, "hello"), []byte("token\n"), 0o644))
		require.NoError(t, r.StartContainer(context.Background(), id))
		s := waitExited(t, r, id)
		assert.Equal(t, int32(0), s.ExitCode, "%+v", s)
		assert.Equal(t, []string{"token"}, logContents(t, s.LogPath, "stdout"))
		entries, err := os.ReadDir(missing)
		require.NoError(t, err, "the mount point stays, empty")
		assert.Empty(t, entries)
	})
}

func TestLongStateDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), strings.Repeat("d", 60), strings.Repeat("e", 60))
	r := newTestRuntime(t, Config{StateDir: dir})
	id := run(t, r, lifecycle.ContainerConfig{Command: []string{"sleep", "1000"}})
	require.Greater(t, len(filepath.Join(r.containerDir(id), records.SocketFile)), protocol.MaxSocketPath)
	out := &syncbuf.Buffer{}
	require.NoError(t, r.Exec(context.Background(), id, []string{"echo", "hi"}, &testAttachIO{stdout: out}))
	assert.Equal(t, "hi\n", out.String())
	require.NoError(t, r.StopContainer(context.Background(), id, time.Second))
}

func TestSandboxes(t *testing.T) {
	r := newTestRuntime(t, Config{})
	ctx := context.Background()
	id, err := r.RunSandbox(ctx, &lifecycle.SandboxConfig{PodUID: "u", Namespace: "ns", Name: "p", Attempt: 2, Labels: map[string]string{"a": "b"}})
	require.NoError(t, err)
	list, err := r.ListSandboxes(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, id, list[0].ID)
	assert.Equal(t, lifecycle.SandboxReady, list[0].State)
	assert.Equal(t, uint32(2), list[0].Attempt)
	assert.Empty(t, list[0].IPs, "processes have the host's addresses")
	assert.Equal(t, map[string]string{"a": "b"}, list[0].Labels)
	ips, err := r.SandboxIPs(ctx, id)
	require.NoError(t, err)
	assert.Empty(t, ips, "processes have the host's addresses")
	_, err = r.SandboxIPs(ctx, "0123456789abcdef")
	assert.True(t, provider.IsNotFound(err), "an unknown sandbox has no addresses to report")
	require.NoError(t, r.StopSandbox(ctx, id))
	list, _ = r.ListSandboxes(ctx)
	assert.Equal(t, lifecycle.SandboxNotReady, list[0].State)
	_, err = r.CreateContainer(ctx, id, &lifecycle.ContainerConfig{Name: "c", Command: []string{"true"}})
	assert.Error(t, err, "a stopped sandbox takes no containers")
	require.NoError(t, r.RemoveSandbox(ctx, id))
	list, _ = r.ListSandboxes(ctx)
	assert.Empty(t, list)
	assert.True(t, provider.IsNotFound(r.RemoveSandbox(ctx, id)))
	_, err = r.CreateContainer(ctx, "0123456789abcdef", &lifecycle.ContainerConfig{})
	assert.True(t, provider.IsNotFound(err))
	_, err = r.ContainerStatus(ctx, "../etc")
	assert.True(t, provider.IsNotFound(err))
}

func TestStats(t *testing.T) {
	r := newTestRuntime(t, Config{})
	id := run(t, r, lifecycle.ContainerConfig{Command: []string{"sh", "-c", "while :; do :; done"}})
	require.Eventually(t, func() bool {
		st, err := r.ContainerStats(context.Background(), id)
		require.NoError(t, err)
		return st.CPUUsageCoreNanoSeconds > 0 && st.MemoryWorkingSetBytes > 0
	}, waitFor, tick)
	require.NoError(t, r.StopContainer(context.Background(), id, time.Second))
	_, err := r.ContainerStats(context.Background(), id)
	assert.ErrorIs(t, err, ErrNotRunning)
}

func TestSupervisorMemory(t *testing.T) {
	r := newTestRuntime(t, Config{})
	id := run(t, r, lifecycle.ContainerConfig{Command: []string{"sleep", "1000"}})
	st, err := records.ReadState(r.containerDir(id))
	require.NoError(t, err)
	status, err := os.ReadFile("/proc/" + strconv.Itoa(st.SupervisorPID) + "/status")
	require.NoError(t, err)
	for _, line := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			t.Logf("supervisor %s", line)
		}
	}
}

// The workload inherits its stdio and nothing else of the supervisor's.
func TestWorkloadInheritsOnlyStdio(t *testing.T) {
	r := newTestRuntime(t, Config{})
	id := run(t, r, lifecycle.ContainerConfig{Command: []string{"sh", "-c", `ls /proc/$$/fd`}})
	s := waitExited(t, r, id)
	assert.Equal(t, []string{"0", "1", "2"}, logContents(t, s.LogPath, "stdout"))
}

// Without PATH in its environment a container gets the default, and finds its command by it.
func TestDefaultPath(t *testing.T) {
	r := newTestRuntime(t, Config{})
	id := run(t, r, lifecycle.ContainerConfig{Command: []string{"sh", "-c", `echo "$PATH"; echo "$HOME"`}, Env: []string{"A=b"}})
	s := waitExited(t, r, id)
	assert.Equal(t, []string{supervisor.DefaultPath, "/nonexistent"}, logContents(t, s.LogPath, "stdout"))
}

// The grace period runs on the runtime's clock.
func TestStopGraceOnTheClock(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	r := newTestRuntime(t, Config{Clock: clk})
	id := run(t, r, lifecycle.ContainerConfig{Command: []string{"sh", "-c", `trap "echo got TERM" TERM; echo ready; while :; do sleep 0.05; done`}})
	logPath := status(t, r, id).LogPath
	require.Eventually(t, func() bool { return len(logContents(t, logPath, "stdout")) > 0 }, waitFor, tick)
	done := make(chan error)
	go func() { done <- r.StopContainer(context.Background(), id, time.Hour) }()
	require.Eventually(t, func() bool { return len(logContents(t, logPath, "stdout")) == 2 && clk.HasWaiters() }, waitFor, tick)
	assert.Equal(t, lifecycle.ContainerRunning, status(t, r, id).State, "TERM trapped: it runs on until the grace period ends")
	clk.Step(time.Hour)
	require.NoError(t, <-done)
	assert.Equal(t, int32(137), status(t, r, id).ExitCode)
}
