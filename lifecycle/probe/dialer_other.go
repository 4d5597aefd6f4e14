//go:build !unix

package probe

import "net"

// newDialer is a plain dialer where the kubelet's SO_LINGER setting is not written for.
func newDialer() *net.Dialer { return &net.Dialer{} }
