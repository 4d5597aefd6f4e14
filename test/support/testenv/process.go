package testenv

import (
	"net"

	"github.com/vk-static/vk-static/test/support/childproc"
)

// startProcess starts a control-plane binary; Stop signals its process group.
func startProcess(name, logPath, binary string, args ...string) (*childproc.Process, error) {
	return childproc.Start(childproc.Options{Name: name, LogPath: logPath, Group: true}, append([]string{binary}, args...)...)
}

// FreePort asks the kernel for an unused loopback port. Another process may take it before
// the child binds it; Start retries the whole start-up once when that happens.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
