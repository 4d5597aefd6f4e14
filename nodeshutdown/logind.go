package nodeshutdown

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/godbus/dbus/v5"
)

// logind's names on the bus.
const (
	logindService   = "org.freedesktop.login1"
	logindObject    = dbus.ObjectPath("/org/freedesktop/login1")
	logindInterface = "org.freedesktop.login1.Manager"
)

// logind is a connection to systemd-logind over D-Bus, the kubelet's systemd.DBusCon: its own
// connection (never the process's shared one), closed by whoever opened it.
type logind struct {
	conn *dbus.Conn
}

// connectLogind connects to the bus at address, or to the system bus for "".
func connectLogind(ctx context.Context, address string) (*logind, error) {
	var conn *dbus.Conn
	var err error
	if address == "" {
		conn, err = dbus.ConnectSystemBus(dbus.WithContext(ctx))
	} else {
		conn, err = dbus.Connect(address, dbus.WithContext(ctx))
	}
	if err != nil {
		return nil, fmt.Errorf("connect to the system D-Bus: %w", err)
	}
	return &logind{conn: conn}, nil
}

func (l *logind) Close() error { return l.conn.Close() }

// inhibitDelayMax is logind's InhibitDelayMaxUSec (logind.conf's InhibitDelayMaxSec): the
// longest a delay inhibitor may hold a shutdown back.
func (l *logind) inhibitDelayMax(ctx context.Context) (time.Duration, error) {
	var v dbus.Variant
	err := l.conn.Object(logindService, logindObject).CallWithContext(ctx, "org.freedesktop.DBus.Properties.Get", 0,
		logindInterface, "InhibitDelayMaxUSec").Store(&v)
	if err != nil {
		return 0, fmt.Errorf("read logind's InhibitDelayMaxUSec: %w", err)
	}
	usec, ok := v.Value().(uint64)
	if !ok {
		return 0, fmt.Errorf("logind's InhibitDelayMaxUSec is %s, not a uint64", v.Signature())
	}
	return time.Duration(usec) * time.Microsecond, nil
}

// inhibit takes a delay inhibitor lock on shutdown: logind holds the shutdown back until the
// file is closed (or InhibitDelayMaxSec has passed).
func (l *logind) inhibit(ctx context.Context) (*os.File, error) {
	var fd dbus.UnixFD
	err := l.conn.Object(logindService, logindObject).CallWithContext(ctx, logindInterface+".Inhibit", 0,
		"shutdown", "vk-static", "vk-static stops the node's pods gracefully", "delay").Store(&fd)
	if err != nil {
		return nil, fmt.Errorf("take logind's shutdown inhibitor lock: %w", err)
	}
	if fd < 0 {
		return nil, errors.New("take logind's shutdown inhibitor lock: no file descriptor in the answer")
	}
	return os.NewFile(uintptr(fd), "logind-inhibitor"), nil
}

// watchShutdown delivers logind's PrepareForShutdown signals (true: the shutdown begins;
// false: it was cancelled) until the connection closes, when the channel closes.
func (l *logind) watchShutdown(ctx context.Context) (<-chan bool, error) {
	if err := l.conn.AddMatchSignalContext(ctx, dbus.WithMatchObjectPath(logindObject),
		dbus.WithMatchInterface(logindInterface), dbus.WithMatchMember("PrepareForShutdown")); err != nil {
		return nil, fmt.Errorf("watch logind's PrepareForShutdown: %w", err)
	}
	signals := make(chan *dbus.Signal, 8)
	l.conn.Signal(signals)
	out := make(chan bool, 1)
	go func() {
		defer close(out)
		for {
			select {
			case s, ok := <-signals:
				if !ok {
					return
				}
				if s.Name != logindInterface+".PrepareForShutdown" || len(s.Body) == 0 {
					continue
				}
				if active, ok := s.Body[0].(bool); ok {
					select {
					case out <- active:
					case <-l.conn.Context().Done():
						return // the watcher has gone: it closed the connection
					}
				}
			case <-l.conn.Context().Done():
				return // the connection closed: godbus does not close a signal channel then
			}
		}
	}()
	return out, nil
}
