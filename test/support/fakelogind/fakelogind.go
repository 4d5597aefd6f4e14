package fakelogind

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
	"github.com/godbus/dbus/v5/prop"

	"github.com/vk-static/vk-static/test/support/childproc"
)

const (
	service   = "org.freedesktop.login1"
	object    = dbus.ObjectPath("/org/freedesktop/login1")
	iface     = "org.freedesktop.login1.Manager"
	busConfig = `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <listen>unix:path=%s</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
`
)

// Inhibit is one call of logind's Inhibit.
type Inhibit struct{ What, Who, Why, Mode string }

// Logind is the fake. Its methods are safe for concurrent use.
type Logind struct {
	address string
	conn    *dbus.Conn

	mu     sync.Mutex
	calls  []Inhibit
	locks  []lock
	events []string // "inhibit", "released" (seen by Held), in order
}

// lock is one lock handed out: the pipe's inode, and the fake's own ends of it.
type lock struct {
	inode          string
	r, w           *os.File
	held, released bool
}

// Start starts a private D-Bus daemon and the fake logind on it, with InhibitDelayMaxSec
// delay; both stop when the test ends. Without dbus-daemon the test fails saying what to
// install: a test that cannot run must not pass.
func Start(t testing.TB, delay time.Duration) *Logind {
	t.Helper()
	daemon, err := exec.LookPath("dbus-daemon")
	if err != nil {
		t.Fatalf("the node shutdown tests need dbus-daemon: install Debian's dbus-daemon package (make testbin does, as root: apt-get install -y dbus-daemon): %v", err)
	}
	dir := t.TempDir()
	socket := filepath.Join(dir, "bus")
	config := filepath.Join(dir, "bus.conf")
	if err := os.WriteFile(config, fmt.Appendf(nil, busConfig, socket), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := childproc.Start(childproc.Options{Name: "dbus-daemon", LogPath: filepath.Join(dir, "dbus-daemon.log")},
		daemon, "--nofork", "--nopidfile", "--nosyslog", "--config-file="+config)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop(5 * time.Second) })
	l := &Logind{address: "unix:path=" + socket}
	deadline := time.Now().Add(10 * time.Second)
	for {
		l.conn, err = dbus.Connect(l.address)
		if err == nil {
			break
		}
		if p.Exited() || time.Now().After(deadline) {
			t.Fatalf("dbus-daemon did not start (log in %s): %v", dir, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Cleanup(func() { _ = l.conn.Close(); l.closeLocks() })
	if err := l.conn.Export(l, object, iface); err != nil {
		t.Fatal(err)
	}
	if _, err := prop.Export(l.conn, object, prop.Map{iface: {
		"InhibitDelayMaxUSec": {Value: uint64(delay / time.Microsecond), Emit: prop.EmitFalse},
	}}); err != nil {
		t.Fatal(err)
	}
	if reply, err := l.conn.RequestName(service, dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("own %s on the test's bus: %v (reply %v)", service, err, reply)
	}
	return l
}

// Address is the bus's address, for the manager's Config.BusAddress.
func (l *Logind) Address() string { return l.address }

// Inhibit is logind's method: the lock is the write end of a pipe, open as long as the shutdown
// is held back.
func (l *Logind) Inhibit(what, who, why, mode string) (dbus.UnixFD, *dbus.Error) {
	r, w, err := os.Pipe()
	if err != nil {
		return -1, dbus.MakeFailedError(err)
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(r.Fd()), &st); err != nil {
		return -1, dbus.MakeFailedError(err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, Inhibit{what, who, why, mode})
	l.locks = append(l.locks, lock{inode: fmt.Sprintf("pipe:[%d]", st.Ino), r: r, w: w})
	l.events = append(l.events, "inhibit")
	return dbus.UnixFD(w.Fd()), nil
}

// Calls are the Inhibit calls so far.
func (l *Logind) Calls() []Inhibit {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Inhibit(nil), l.calls...)
}

// Held reports whether a lock handed out is still open somewhere but in the fake: a file
// descriptor of any process on its pipe other than the fake's two ends.
func (l *Logind) Held() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	open := openPipes()
	held := false
	for i := range l.locks {
		lk := &l.locks[i]
		if open[lk.inode] > 2 {
			held, lk.held = true, true
		} else if lk.held && !lk.released {
			// Only a lock seen held is released: one on its way to the client is not.
			lk.released = true
			l.events = append(l.events, "released")
		}
	}
	return held
}

// Events are what happened to the locks, in order: "inhibit" for each taken, "released" for
// each Held found closed.
func (l *Logind) Events() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.events...)
}

// PrepareForShutdown emits logind's signal: true when a shutdown begins, false when it was
// cancelled.
func (l *Logind) PrepareForShutdown(active bool) error {
	return l.conn.Emit(object, iface+".PrepareForShutdown", active)
}

func (l *Logind) closeLocks() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, lk := range l.locks {
		_ = lk.r.Close()
		_ = lk.w.Close()
	}
}

// openPipes counts the file descriptors of every process it may read (this one, and an agent
// it started) by the pipe they are on.
func openPipes() map[string]int {
	out := map[string]int{}
	dirs, _ := filepath.Glob("/proc/[0-9]*/fd")
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue // gone, or not ours to read
		}
		for _, e := range entries {
			if target, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && strings.HasPrefix(target, "pipe:") {
				out[target]++
			}
		}
	}
	return out
}
