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

	"golang.org/x/sys/unix"

	"github.com/vk-static/vk-static/test/support/cgrouptest"
)

func TestMain(m *testing.M) {
	RunInitIfRequested() // the init helper is this test binary
	if os.Getenv(remountEachEnv) != "" {
		remountEachChild()
	}
	os.Exit(m.Run())
}

// testCgroup makes a cgroup with the pids controller, removed at the end of the test, and
// returns it as a container's record holds it: its directory in the v1 pids hierarchy, or its
// one v2 directory; dir is the directory whose cgroup.procs lists its processes.
func testCgroup(t *testing.T) (cgroups map[string]string, dir string) {
	t.Helper()
	cgroups = cgrouptest.Dirs(t, cgrouptest.Root(t), "pids")
	if d, ok := cgroups[""]; ok {
		return cgroups, d
	}
	return cgroups, cgroups["pids"]
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

// The workload starts in its container's cgroup without the init helper — forked by a thread
// that joined the cgroup (v1), or cloned into it (v2) — and when startWorkload returns the
// cgroup holds the workload only, never the supervisor's pid, which a stop (KillAll) would read
// from cgroup.procs and kill. Repeated: on v1, without the wait for the thread's exit, the
// thread is still there at the return often enough for some of the starts to see it.
func TestStartWorkloadLeavesOnlyTheWorkloadInItsCgroup(t *testing.T) {
	cgroups, dir := testCgroup(t)
	s := &supervisor{launch: newLauncher()}
	s.rec.Cgroups = cgroups
	self := strconv.Itoa(os.Getpid())
	seen := 0
	for i := 0; i < 200; i++ {
		cmd := exec.Command("/bin/sleep", "1000")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // as command makes it
		if err := s.startWorkload(cmd); err != nil {
			t.Fatal(err)
		}
		procs := readIDs(t, filepath.Join(dir, "cgroup.procs"))
		stop(cmd)
		if slices.Contains(procs, self) {
			seen++
		}
		if i == 0 {
			if cmd.Path != "/bin/sleep" {
				t.Errorf("started as %s %q: want /bin/sleep itself, not through the init helper", cmd.Path, cmd.Args)
			}
			if !slices.Equal(procs, []string{strconv.Itoa(cmd.Process.Pid)}) {
				t.Errorf("cgroup.procs %v: want the workload %d only", procs, cmd.Process.Pid)
			}
		}
	}
	if seen > 0 {
		t.Errorf("the supervisor's pid was in cgroup.procs after %d of 200 starts", seen)
	}
}

// At the pids limit the workload still starts, alone in its cgroup. On v1 the thread that
// joins the cgroup counts under its pids.max (the pod's, hierarchically), so forking from it
// needs a pid more than the init helper, which executes in its own place: with room for one
// process, the fork is refused (EAGAIN), which is errNotJoined — nothing started, cmd made
// anew — and the workload starts through the helper, in the cgroup, as it would have without
// the thread. On v2 the workload is cloned into the cgroup, the one process there.
func TestStartWorkloadAtThePidsLimit(t *testing.T) {
	cgroups, dir := testCgroup(t)
	if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte("1"), 0); err != nil {
		t.Fatal(err)
	}
	l := newLauncher()
	if v1 := cgroupV1Dirs(cgroups); len(v1) > 0 {
		cmd := exec.Command("/bin/sleep", "1000")
		err := l.startInCgroup(cmd, v1)
		if !errors.Is(err, errNotJoined) || !errors.Is(err, syscall.EAGAIN) {
			t.Fatalf("startInCgroup at the pids limit: %v, want errNotJoined from EAGAIN", err)
		}
		if cmd.Process != nil {
			t.Fatal("the failed start left a process")
		}
	}

	s := &supervisor{launch: l}
	s.rec.Cgroups = cgroups
	cmd := exec.Command("/bin/sleep", "1000")
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
