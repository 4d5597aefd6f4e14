package supervisor

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestMain(m *testing.M) {
	RunInitIfRequested() // the init helper is this test binary
	if os.Getenv(remountEachEnv) != "" {
		remountEachChild()
	}
	os.Exit(m.Run())
}

// v1Cgroup makes a cgroup in the v1 pids hierarchy, removed at the end of the test.
func v1Cgroup(t *testing.T) string {
	t.Helper()
	const mnt = "/sys/fs/cgroup/pids"
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	if _, err := os.Stat(filepath.Join(mnt, "tasks")); err != nil {
		t.Skip("no cgroup v1 pids hierarchy at", mnt)
	}
	dir, err := os.MkdirTemp(mnt, "vk-static-launcher-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for deadline := time.Now().Add(10 * time.Second); ; {
			err := os.Remove(dir)
			if err == nil || time.Now().After(deadline) {
				if err != nil {
					t.Errorf("remove %s: %v", dir, err)
				}
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
	return dir
}

func readIDs(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(data))
}

func stop(cmd *exec.Cmd) {
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
}

// When startInCgroup returns, the thread that joined the cgroup to fork the workload has left
// it: the cgroup holds the workload only, never the supervisor's pid, which a stop (KillAll)
// would read from cgroup.procs and kill. Repeated: without the wait for the thread's exit, it
// is still there at the return often enough for some of the starts to see it.
func TestStartInCgroupReturnsWithTheThreadGone(t *testing.T) {
	dir := v1Cgroup(t)
	l := newLauncher()
	self := strconv.Itoa(os.Getpid())
	seen := 0
	for i := 0; i < 200; i++ {
		cmd := exec.Command("/bin/sleep", "1000")
		if err := l.startInCgroup(cmd, []string{dir}); err != nil {
			t.Fatal(err)
		}
		procs := readIDs(t, filepath.Join(dir, "cgroup.procs"))
		tasks := readIDs(t, filepath.Join(dir, "tasks"))
		stop(cmd)
		if slices.Contains(procs, self) {
			seen++
		}
		if i == 0 && !slices.Equal(tasks, []string{strconv.Itoa(cmd.Process.Pid)}) {
			t.Errorf("tasks %v: want the workload %d only", tasks, cmd.Process.Pid)
		}
	}
	if seen > 0 {
		t.Errorf("the supervisor's pid was in cgroup.procs after %d of 200 starts", seen)
	}
}

// The thread that joined the cgroup counts under its pids.max (the pod's, hierarchically), so
// forking from it needs a pid more than the init helper, which executes in its own place: with
// room for one process, the fork is refused (EAGAIN), which is errNotJoined — nothing started,
// cmd made anew — and the workload starts through the helper, in the cgroup, as it would have
// without the thread.
func TestStartInCgroupAtThePidsLimitFallsBackToTheInitHelper(t *testing.T) {
	dir := v1Cgroup(t)
	if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte("1"), 0); err != nil {
		t.Fatal(err)
	}
	l := newLauncher()

	cmd := exec.Command("/bin/sleep", "1000")
	err := l.startInCgroup(cmd, []string{dir})
	if !errors.Is(err, errNotJoined) || !errors.Is(err, syscall.EAGAIN) {
		t.Fatalf("startInCgroup at the pids limit: %v, want errNotJoined from EAGAIN", err)
	}
	if cmd.Process != nil {
		t.Fatal("the failed start left a process")
	}

	s := &supervisor{launch: l}
	s.rec.Cgroups = map[string]string{"pids": dir}
	cmd = exec.Command("/bin/sleep", "1000")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // as command makes it
	if err := s.startWorkload(cmd); err != nil {
		t.Fatalf("startWorkload at the pids limit: %v", err)
	}
	defer stop(cmd)
	if procs := readIDs(t, filepath.Join(dir, "cgroup.procs")); !slices.Equal(procs, []string{strconv.Itoa(cmd.Process.Pid)}) {
		t.Errorf("cgroup.procs %v: want the workload %d only", procs, cmd.Process.Pid)
	}
}

// Without a thread pidfd (before Linux 6.9), the wait for the thread's exit watches its /proc
// entry: it returns once the entry is gone.
func TestThreadExitWithoutPidfd(t *testing.T) {
	for i := 0; i < 50; i++ {
		tids := make(chan int)
		go func() {
			runtime.LockOSThread() // never unlocked: Go ends the thread with the goroutine
			tids <- unix.Gettid()
		}()
		tid := <-tids
		if tid == os.Getpid() {
			continue // the main thread, which Go never ends (startInCgroup avoids it)
		}
		exit := &threadExit{tid: tid, pidfd: -1}
		if err := exit.wait(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(fmt.Sprintf("/proc/self/task/%d", exit.tid)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("thread %d still there after the wait: %v", exit.tid, err)
		}
	}
}
