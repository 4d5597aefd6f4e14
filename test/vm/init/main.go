// Command init is the test machine's init (package test/vm): it mounts what the tests need,
// with cgroup v2 alone at /sys/fs/cgroup, moves itself into a cgroup below the root, runs each
// test binary of vm.TestsFile with its output on the serial console, reports on it (vm.Marker),
// and powers the machine off. Built static (CGO_ENABLED=0): the machine has no C library of its
// own.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/vk-static/vk-static/test/vm"
)

// testsCgroup is the cgroup init and the tests run in: not the hierarchy's root, which the
// no-internal-processes rule spares, but a cgroup below it, as a service under systemd has.
const testsCgroup = "/sys/fs/cgroup/tests"

func main() {
	if err := setUp(); err != nil {
		report("error", err.Error())
		powerOff()
	}
	data, err := os.ReadFile(vm.TestsFile)
	var tests []vm.Test
	if err == nil {
		err = json.Unmarshal(data, &tests)
	}
	if err != nil {
		report("error", err.Error())
		powerOff()
	}
	for _, t := range tests {
		report("start", t.Name)
		cmd := exec.Command(vm.BinaryPath(t.Name), t.Args...)
		cmd.Dir = "/tmp"
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stdout
		cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root", "TMPDIR=/tmp"}
		code := 0
		if err := cmd.Run(); err != nil {
			var exit *exec.ExitError
			if !errors.As(err, &exit) {
				report("error", t.Name+": "+err.Error())
			}
			code = 1
			if cmd.ProcessState != nil && cmd.ProcessState.ExitCode() > 0 {
				code = cmd.ProcessState.ExitCode()
			}
		}
		report("exit", t.Name, strconv.Itoa(code))
	}
	report("done")
	powerOff()
}

// setUp mounts /proc, /sys, /dev (its pts, shm and mqueue: containers' mount namespaces bind
// them), cgroup2, a /tmp and /run; installs busybox's commands in
// /bin (sh, dd, sleep, setsid: what the tests' containers run); writes the users the runtime
// looks up; brings the loopback up; and moves init into testsCgroup.
func setUp() error {
	for _, m := range []struct{ source, target, fstype string }{
		{"proc", "/proc", "proc"},
		{"sysfs", "/sys", "sysfs"},
		{"devtmpfs", "/dev", "devtmpfs"},
		{"devpts", "/dev/pts", "devpts"},
		{"tmpfs", "/dev/shm", "tmpfs"},
		{"mqueue", "/dev/mqueue", "mqueue"},
		{"cgroup2", "/sys/fs/cgroup", "cgroup2"},
		{"tmpfs", "/tmp", "tmpfs"},
		{"tmpfs", "/run", "tmpfs"},
	} {
		if err := os.MkdirAll(m.target, 0o755); err != nil {
			return err
		}
		if err := unix.Mount(m.source, m.target, m.fstype, 0, ""); err != nil {
			return fmt.Errorf("mount %s on %s: %w", m.fstype, m.target, err)
		}
	}
	if out, err := exec.Command("/bin/busybox", "--install", "-s", "/bin").CombinedOutput(); err != nil {
		return fmt.Errorf("busybox --install: %v: %s", err, out)
	}
	for name, content := range map[string]string{
		"/etc/passwd": "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n",
		"/etc/group":  "root:x:0:\nnogroup:x:65534:\n",
		"/etc/hosts":  "127.0.0.1 localhost\n",
	} {
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			return err
		}
	}
	if out, err := exec.Command("/bin/ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
		return fmt.Errorf("loopback: %v: %s", err, out)
	}
	if err := os.Mkdir(testsCgroup, 0o755); err != nil {
		return err
	}
	return os.WriteFile(testsCgroup+"/cgroup.procs", []byte(strconv.Itoa(os.Getpid())), 0)
}

func report(fields ...string) {
	line := vm.Marker
	for _, f := range fields {
		line += " " + f
	}
	fmt.Println(line)
}

func powerOff() {
	unix.Sync()
	_ = unix.Reboot(unix.LINUX_REBOOT_CMD_POWER_OFF)
	select {} // init may not exit: the kernel would panic
}
