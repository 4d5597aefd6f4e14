package procfs

import (
	"encoding/binary"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// The samples are as a little-endian host prints them (the kernel prints each 32-bit word of an
// address as a number).
func littleEndian(t *testing.T) {
	t.Helper()
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		t.Skip("the samples are a little-endian host's")
	}
}

func TestParseTCPListeners(t *testing.T) {
	littleEndian(t)
	for _, tc := range []struct {
		name  string
		input string
		want  []Listener
	}{
		{
			name: "tcp",
			input: `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000:07E8 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 656 1 000000002e32a808 100 0 0 10 0
   1: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 12345 1 0000000000000000 100 0 0 10 0
   2: 020200C0:8E78 507100CB:01BB 01 00000000:00000000 02:0000000C 00000000     0        0 3945 2 0000000098e869d5 21 4 1 90 146
   3: 0100007F:1F90 0100007F:D431 06 00000000:00000000 03:00001769 00000000     0        0 0 3 0000000000000000
   4: 0500000A:0050 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 777 1 0000000000000000 100 0 0 10 0
`,
			want: []Listener{
				{netip.MustParseAddrPort("0.0.0.0:2024"), 656},
				{netip.MustParseAddrPort("127.0.0.1:8080"), 12345},
				{netip.MustParseAddrPort("10.0.0.5:80"), 777},
			},
		},
		{
			name: "tcp6",
			input: `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000000000000:0016 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1001 1 0000000000000000 100 0 0 10 0
   1: 00000000000000000000000001000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1002 1 0000000000000000 100 0 0 10 0
   2: 0000000000000000FFFF00000100007F:2382 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1003 1 0000000000000000 100 0 0 10 0
   3: 000080FE000000000000000001000000:0050 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1004 1 0000000000000000 100 0 0 10 0
   4: 00000000000000000000000001000000:1F90 00000000000000000000000001000000:C350 01 00000000:00000000 00:00000000 00000000     0        0 1005 1 0000000000000000 20 4 30 10 -1
`,
			want: []Listener{
				{netip.MustParseAddrPort("[::]:22"), 1001},
				{netip.MustParseAddrPort("[::1]:8080"), 1002},
				{netip.MustParseAddrPort("127.0.0.1:9090"), 1003}, // IPv4-mapped: its IPv4 form
				{netip.MustParseAddrPort("[fe80::1]:80"), 1004},
			},
		},
		{name: "header only", input: "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseTCPListeners(strings.NewReader(tc.input))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestParseTCPListenersMalformed(t *testing.T) {
	const header = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	for _, line := range []string{
		"   0: 00000000:07E8 00000000:0000 0A\n",
		"   0: 000000:07E8 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 656\n",
		"   0: 00000000 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 656\n",
		"   0: 00000000:07E8 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 x\n",
		"   0: 00000000:XYZW 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 656\n",
		"   0: 00000000:07E8 00000000:0000 ZZ 00000000:00000000 00:00000000 00000000     0        0 656\n",
	} {
		if got, err := ParseTCPListeners(strings.NewReader(header + line)); err == nil {
			t.Errorf("%q: no error, %v", line, got)
		}
	}
}

// A socket this process listens on is among its socket inodes and its namespace's listeners.
func TestTCPListenersAndSocketInodes(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	f, err := l.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		t.Fatal(err)
	}

	inodes := map[uint64]bool{}
	if err := SocketInodes(os.Getpid(), inodes); err != nil {
		t.Fatal(err)
	}
	if !inodes[st.Ino] {
		t.Errorf("socket inode %d not among this process's: %v", st.Ino, inodes)
	}
	listeners, err := TCPListeners(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	want := Listener{netip.MustParseAddrPort(l.Addr().String()), st.Ino}
	if !slices.Contains(listeners, want) {
		t.Errorf("%v not among the listeners: %v", want, listeners)
	}
	ns, err := NetNamespace(os.Getpid())
	if err != nil || !strings.HasPrefix(ns, "net:[") {
		t.Errorf("network namespace %q, %v", ns, err)
	}
	if err := SocketInodes(1<<30, inodes); !os.IsNotExist(err) {
		t.Errorf("a process that is not there: %v", err)
	}
}

// SessionPids finds a session's processes: its leader and what it started.
func TestSessionPids(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 1000 & echo ready; wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	}()
	if _, err := out.Read(make([]byte, 6)); err != nil {
		t.Fatal(err)
	}
	sid := cmd.Process.Pid
	pids, err := SessionPids(sid)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(pids, sid) || len(pids) != 2 {
		t.Errorf("session %d: %v, want the shell and one sleep", sid, pids)
	}
	for _, pid := range pids {
		if st, err := ReadStat(pid); err != nil || st.Session != sid {
			t.Errorf("pid %d: %+v, %v", pid, st, err)
		}
	}
}
