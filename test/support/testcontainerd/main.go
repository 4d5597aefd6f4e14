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
	cd, err := Start(context.Background(), append(opts, Options{})[0]) // the first, or none
	if err != nil {
		fmt.Fprintf(os.Stderr, "testcontainerd: %v\n", err)
		return 1
	}
	*c = cd
	return stopAfter(cd, m.Run())
}

// stopAfter stops containerd after the tests ended with code, keeping its log if they failed;
// a failed stop fails the run.
func stopAfter(cd *Containerd, code int) int {
	if code != 0 {
		if kept, err := keepLog(cd.LogPath()); err == nil {
			fmt.Fprintf(os.Stderr, "testcontainerd: containerd's log kept in %s\n", kept)
		}
	}
	if err := cd.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "testcontainerd: stop: %v\n", err)
		return max(code, 1)
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
