// Package fakelogind is systemd-logind as the node shutdown manager sees it, for tests: a
// private D-Bus daemon (Debian's dbus-daemon, started by the test and stopped with it) on which
// a fake exports org.freedesktop.login1.Manager — the InhibitDelayMaxUSec property, Inhibit
// (a pipe's write end as the lock, as logind hands out a FIFO's) — and emits
// PrepareForShutdown.
//
// The fake lives in the test's process; the lock it hands out lives where the client is (the
// test's process, or an agent it started with the bus's address in DBUS_SYSTEM_BUS_ADDRESS):
// Held tells whether a lock is still open by looking for the pipe among the file descriptors
// of every process.
//
//	l := fakelogind.Start(t, 30*time.Second) // fails the test, naming the package, without dbus-daemon
//	cfg.BusAddress = l.Address()
//	require.Eventually(t, l.Held, ...)
//	l.PrepareForShutdown(true)
package fakelogind
