// Package vm runs test binaries in a small virtual machine whose kernel mounts cgroup v2 alone,
// for the tests that must see the unified hierarchy on hosts that cannot have it: the CI
// machines are cgroup v1 (a hybrid layout, the host's own tooling holding the v1 memory
// hierarchy), and most hosts vk-static is installed on are v2.
//
// The machine is QEMU (qemu-system-x86_64, TCG: no /dev/kvm is needed) with a kernel of the
// distribution's, booted from an initramfs that holds the test binaries (go test -c), the
// shared libraries they link (the race detector's binaries link the C library), a static
// busybox for the commands the tests' containers run, and init (package
// test/vm/init): it mounts cgroup2 at /sys/fs/cgroup, moves itself into a cgroup of its own
// below the root — as a service under systemd runs, so that the tests meet the
// no-internal-processes rule as they would on such a host — runs each binary, and powers the
// machine off. Everything comes back over the serial console: the tests' output as it is
// printed, and a line per binary with its exit status (Marker). Run fails, with the reason,
// when the machine does not start, does not report, or runs out of time; it never passes
// without every binary having run and passed.
//
//	err := vm.Run(ctx, vm.Config{QEMU: "qemu-system-x86_64", Kernel: "vmlinuz", Busybox: "busybox",
//		Init: "init", Tests: []vm.Test{{Name: "process", Binary: "process.test", Args: []string{"-test.run", "^TestCgroup"}}},
//		Timeout: 20 * time.Minute, Output: os.Stdout})
//
// cmd/vk-static-vmtest builds the binaries and runs them: `make test` calls it.
package vm
