// Package pty opens pseudo-terminals and sizes them, for the supervisor (a TTY container's
// terminal) and the runtime (an exec's terminal), with a few ioctls rather than a dependency.
//
//	master, slave, err := pty.Open()
//	...
//	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
//	_ = pty.SetWinsize(master, 80, 24)
package pty
