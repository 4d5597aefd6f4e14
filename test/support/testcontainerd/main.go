package testcontainerd

import (
	"context"
	"fmt"
	"io"
	"os"
	"testing"
)

// Main starts one containerd for a test package, stores it in *c, runs the tests and stops it.
// When a test failed, containerd's log is copied to a file that is kept, and its path printed.
// Use it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(testcontainerd.Main(m, &cd)) }
func Main(m *testing.M, c **Containerd, opts ...Options) int {
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	cd, err := Start(context.Background(), o)
	if err != nil {
		fmt.Fprintf(os.Stderr, "testcontainerd: %v\n", err)
		return 1
	}
	*c = cd
	code := m.Run()
	if code != 0 {
		if kept, err := keepLog(cd.LogPath()); err == nil {
			fmt.Fprintf(os.Stderr, "testcontainerd: containerd's log kept in %s\n", kept)
		}
	}
	if err := cd.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "testcontainerd: stop: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// keepLog copies the log out of the instance's directory, which Stop removes.
func keepLog(path string) (string, error) {
	src, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer src.Close()
	dst, err := os.CreateTemp("", "vk-static-containerd-*.log")
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return "", err
	}
	return dst.Name(), dst.Close()
}
