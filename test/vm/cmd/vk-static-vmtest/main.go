// Command vk-static-vmtest runs the cgroup-sensitive tests of the process runtime on cgroup v2,
// in a machine of package test/vm: it builds the test binaries (go test -c, with the race
// detector) and the machine's init, boots the machine and runs them there, and exits non-zero,
// saying why, when the machine cannot start or a test fails. `make test` runs it with the
// kernel and busybox `make vm-testbin` installs. Run it from the repository's root (it builds
// the packages by their relative paths):
//
//	go run ./test/vm/cmd/vk-static-vmtest -kernel vmlinuz -busybox busybox
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/vk-static/vk-static/test/vm"
)

// tests are the packages whose tests depend on the cgroup version, and which of their tests:
// the process runtime's cgroups (limits, OOM kills, setsid, the workload's cgroup, the pod
// cgroups' removal) and the supervisor's start of a workload in its cgroup.
var tests = []struct {
	name, pkg, run string
}{
	{"process", "./runtime/process", "^TestCgroup"},
	{"supervisor", "./runtime/process/supervisor", "^TestStartWorkload"},
}

func main() {
	kernel := flag.String("kernel", "", "the machine's kernel (a bzImage, such as Debian's /boot/vmlinuz-*)")
	busybox := flag.String("busybox", "", "a statically linked busybox (Debian's busybox-static)")
	qemu := flag.String("qemu", "qemu-system-x86_64", "QEMU")
	timeout := flag.Duration("timeout", 30*time.Minute, "the most the machine may run, boot included")
	race := flag.Bool("race", true, "build the test binaries with the race detector")
	flag.Parse()
	if *kernel == "" || *busybox == "" {
		fmt.Fprintln(os.Stderr, "vk-static-vmtest: -kernel and -busybox are required (make vm-testbin installs them)")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *kernel, *busybox, *qemu, *timeout, *race); err != nil {
		fmt.Fprintln(os.Stderr, "vk-static-vmtest:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, kernel, busybox, qemu string, timeout time.Duration, race bool) error {
	dir, err := os.MkdirTemp("", "vk-static-vmtest-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	start := time.Now()
	cfg := vm.Config{QEMU: qemu, Kernel: kernel, Busybox: busybox, Init: filepath.Join(dir, "init"),
		Timeout: timeout, Output: os.Stdout, WorkDir: dir}
	build := exec.CommandContext(ctx, "go", "build", "-o", cfg.Init, "./test/vm/init")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if err := runCmd(build); err != nil {
		return fmt.Errorf("build init: %w", err)
	}
	for _, t := range tests {
		bin := filepath.Join(dir, t.name+".test")
		args := []string{"test", "-c", "-o", bin}
		if race {
			args = append(args, "-race")
		}
		if err := runCmd(exec.CommandContext(ctx, "go", append(args, t.pkg)...)); err != nil {
			return fmt.Errorf("build %s's tests: %w", t.pkg, err)
		}
		cfg.Tests = append(cfg.Tests, vm.Test{Name: t.name, Binary: bin,
			Args: []string{"-test.run", t.run, "-test.v", "-test.count=1", "-test.timeout", "20m"}})
	}
	built := time.Since(start)
	res, err := vm.Run(ctx, cfg)
	if res != nil {
		fmt.Printf("vk-static-vmtest: built in %s; the machine booted in %s and ran %d of %d test binaries in %s (TCG)\n",
			built.Round(time.Second), res.Boot.Round(100*time.Millisecond), len(res.Exits), len(cfg.Tests), res.Total.Round(time.Second))
	}
	if err != nil {
		return err
	}
	fmt.Println("vk-static-vmtest: PASS on cgroup v2")
	return nil
}

func runCmd(cmd *exec.Cmd) error {
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	return cmd.Run()
}
