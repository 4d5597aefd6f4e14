package supervisor

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/vk-static/vk-static/internal/mounts"
)

// makeBeneath makes a mount point one component at a time and never follows a symbolic link:
// a directory swapped for a link to elsewhere — by a container that can write there — makes it
// fail, where os.MkdirAll would create the rest, and the mount would go, wherever the link
// points.
func TestMakeBeneathFollowsNoLink(t *testing.T) {
	base, elsewhere := t.TempDir(), t.TempDir()
	if err := os.Symlink(elsewhere, filepath.Join(base, "secrets")); err != nil {
		t.Fatal(err)
	}
	if fd, err := makeBeneath(base, "secrets/kubernetes.io/serviceaccount", true); err == nil {
		unix.Close(fd)
		t.Fatal("made a mount point through a symbolic link")
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) > 0 {
		t.Errorf("created %s in the link's target", entries[0].Name())
	}

	// A link as the last component: a file mount point is not created through it either.
	if err := os.Symlink(filepath.Join(elsewhere, "target"), filepath.Join(base, "file")); err != nil {
		t.Fatal(err)
	}
	if fd, err := makeBeneath(base, "file", false); err == nil {
		unix.Close(fd)
		t.Fatal("made a file mount point through a symbolic link")
	}
	if _, err := os.Lstat(filepath.Join(elsewhere, "target")); err == nil {
		t.Error("created the link's target")
	}
}

func TestMakeBeneath(t *testing.T) {
	base := t.TempDir()
	for _, tc := range []struct {
		rel   string
		isDir bool
	}{{"secrets/kubernetes.io/serviceaccount", true}, {"secrets/kubernetes.io/serviceaccount", true}, {"secrets/token", false}} {
		fd, err := makeBeneath(base, tc.rel, tc.isDir)
		if err != nil {
			t.Fatalf("%s: %v", tc.rel, err)
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			t.Fatal(err)
		}
		unix.Close(fd)
		if got := st.Mode&unix.S_IFMT == unix.S_IFDIR; got != tc.isDir {
			t.Errorf("%s: a directory: %v, want %v", tc.rel, got, tc.isDir)
		}
		if _, err := os.Stat(filepath.Join(base, tc.rel)); err != nil {
			t.Errorf("%s: %v", tc.rel, err)
		}
	}
}

// remountEachEnv makes the test binary, run in a mount namespace of its own, call remountEach
// and print its mounts.
const remountEachEnv = "SUPERVISOR_TEST_REMOUNT_EACH"

func remountEachChild() {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	if err := remountEach(); err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	data, _ := os.ReadFile("/proc/self/mountinfo")
	os.Stdout.Write(data)
	os.Exit(0)
}

// The fallback of kernels before 5.12 (no mount_setattr): every mount is remounted nosuid and
// nodev, /dev and /dev/pts nosuid only.
func TestRemountEach(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: mounts in a mount namespace")
	}
	cmd := exec.Command("/proc/self/exe", "-test.run=^$")
	cmd.Env = append(os.Environ(), remountEachEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	// The last mount at a point is the one on top; those below it cannot be reached.
	top := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if fields := strings.Fields(line); len(fields) >= 6 {
			top[mounts.Unescape(fields[4])] = fields[5]
		}
	}
	if len(top) < 2 {
		t.Fatalf("no mounts: %s", out)
	}
	for point, opts := range top {
		flags := strings.Split(opts, ",")
		if !slices.Contains(flags, "nosuid") {
			t.Errorf("%s is not nosuid: %s", point, opts)
		}
		if slices.Contains(devicesAt, point) == slices.Contains(flags, "nodev") {
			t.Errorf("%s: nodev is %v: %s", point, slices.Contains(flags, "nodev"), opts)
		}
	}
}
