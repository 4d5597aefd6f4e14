package vm

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Config is a machine and what it runs.
type Config struct {
	// QEMU is qemu-system-x86_64, Kernel a bzImage (a distribution's vmlinuz), Busybox a
	// statically linked busybox, Init the machine's init (package test/vm/init, built static).
	QEMU, Kernel, Busybox, Init string
	// Memory is the machine's memory in MiB; CPUs its processors.
	Memory, CPUs int
	// Tests run in order.
	Tests []Test
	// Timeout bounds the whole run, boot included.
	Timeout time.Duration
	// Output receives the serial console: the kernel's messages, and every test's output.
	Output io.Writer
	// WorkDir holds the initramfs; a temporary directory when empty.
	WorkDir string
}

// Result is what the machine reported.
type Result struct {
	// Exits are the tests' exit codes, by name, as init reported them.
	Exits map[string]int
	// Done: init reported that every test had run.
	Done bool
	// Boot is the time from QEMU's start to init's first report; Total to QEMU's exit.
	Boot, Total time.Duration
}

// Run boots the machine, runs the tests in it, and returns their results: an error when the
// machine could not start, did not report every test, reported an error of init's, or a test
// failed.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.Memory == 0 {
		cfg.Memory = 2048
	}
	if cfg.CPUs == 0 {
		cfg.CPUs = 2
	}
	if cfg.Output == nil {
		cfg.Output = io.Discard
	}
	for what, p := range map[string]string{"kernel": cfg.Kernel, "busybox": cfg.Busybox, "init": cfg.Init} {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("the machine's %s: %w", what, err)
		}
	}
	qemu, err := exec.LookPath(cfg.QEMU)
	if err != nil {
		return nil, fmt.Errorf("cannot start the machine: %w", err)
	}
	dir := cfg.WorkDir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "vk-static-vm-"); err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
	}
	rootfs, err := newInitramfs(&cfg)
	if err != nil {
		return nil, fmt.Errorf("initramfs: %w", err)
	}
	initrd := filepath.Join(dir, "initramfs.cpio.gz")
	f, err := os.Create(initrd)
	if err != nil {
		return nil, err
	}
	if err := rootfs.write(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("initramfs: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, err
	}

	if cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.Timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, qemu, qemuArgs(&cfg, initrd)...)
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = cmd.Stdout
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start the machine: %w", err)
	}
	res := &Result{Exits: map[string]int{}}
	var last []string // the console's last lines, for a machine that did not report
	var initErrs []string
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		fmt.Fprintln(cfg.Output, line)
		last = append(last, line)
		if len(last) > 20 {
			last = last[1:]
		}
		i := strings.Index(line, Marker)
		if i < 0 {
			continue
		}
		fields := strings.Fields(line[i+len(Marker):])
		if res.Boot == 0 {
			res.Boot = time.Since(start)
		}
		switch {
		case len(fields) == 3 && fields[0] == "exit":
			code, _ := strconv.Atoi(fields[2])
			res.Exits[fields[1]] = code
		case len(fields) >= 1 && fields[0] == "done":
			res.Done = true
		case len(fields) >= 1 && fields[0] == "error":
			initErrs = append(initErrs, strings.Join(fields[1:], " "))
		}
	}
	werr := cmd.Wait()
	res.Total = time.Since(start)
	switch {
	case ctx.Err() != nil:
		return res, fmt.Errorf("the machine ran out of time (%s) after %d of %d tests; its last lines:\n%s", cfg.Timeout, len(res.Exits), len(cfg.Tests), strings.Join(last, "\n"))
	case res.Boot == 0:
		return res, fmt.Errorf("the machine did not start (QEMU: %v); its last lines:\n%s", werr, strings.Join(last, "\n"))
	case len(initErrs) > 0:
		return res, fmt.Errorf("init in the machine: %s", strings.Join(initErrs, "; "))
	case !res.Done:
		return res, fmt.Errorf("the machine stopped before every test ran (QEMU: %v); its last lines:\n%s", werr, strings.Join(last, "\n"))
	}
	var failed []string
	for _, t := range cfg.Tests {
		code, ok := res.Exits[t.Name]
		switch {
		case !ok:
			failed = append(failed, t.Name+" (not run)")
		case code != 0:
			failed = append(failed, fmt.Sprintf("%s (exit %d)", t.Name, code))
		}
	}
	if len(failed) > 0 {
		return res, errors.New("failed in the machine: " + strings.Join(failed, ", "))
	}
	return res, nil
}

// qemuArgs boot the kernel with the initramfs on emulated processors (TCG, which needs no
// /dev/kvm), the serial console on QEMU's standard output, no display, network or disk, and
// no reboot: init powers the machine off, a kernel panic ends QEMU.
func qemuArgs(cfg *Config, initrd string) []string {
	return []string{
		"-accel", "tcg", "-cpu", "max", "-m", strconv.Itoa(cfg.Memory), "-smp", strconv.Itoa(cfg.CPUs),
		"-nographic", "-no-reboot", "-nic", "none",
		"-kernel", cfg.Kernel, "-initrd", initrd,
		"-append", "console=ttyS0 panic=-1 quiet loglevel=4",
	}
}
