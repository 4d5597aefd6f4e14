package cri

import "golang.org/x/sys/unix"

// signalName is the signal's name ("SIGTERM"), "" for an unknown number.
func signalName(sig int) string { return unix.SignalName(unix.Signal(sig)) }
