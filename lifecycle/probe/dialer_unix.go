//go:build unix

package probe

import (
	"net"
	"syscall"
)

// newDialer is the kubelet's probe dialer: SO_LINGER of one second, so that the many short
// probe connections do not linger in TIME-WAIT for the OS default of a minute
// (https://issues.k8s.io/89898). One second rather than zero, so the close is a FIN, not a RST.
func newDialer() *net.Dialer {
	return &net.Dialer{
		Control: func(_, _ string, c syscall.RawConn) error {
			return c.Control(func(fd uintptr) {
				_ = syscall.SetsockoptLinger(int(fd), syscall.SOL_SOCKET, syscall.SO_LINGER, &syscall.Linger{Onoff: 1, Linger: 1})
			})
		},
	}
}
