package procfs

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/netip"
	"os"
	"strconv"
	"strings"
)

// SessionPids are the processes of session sid: every /proc/<pid>/stat whose session is sid.
// A session's id is its leader's pid, which the kernel does not give to another process while
// any member lives; the caller checks that the leader still is the process it recorded
// (SameProcess) after the scan, so that the session cannot be a later one with the same id.
func SessionPids(sid int) ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := ReadStat(pid); err == nil && st.Session == sid {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// SocketInodes adds to inodes the inode of every socket pid has open: its /proc/<pid>/fd links
// that read socket:[<inode>], the inode /proc/net/tcp lists each socket under. A process that
// is gone is fs.ErrNotExist; a descriptor closed meanwhile is skipped.
func SocketInodes(pid int, inodes map[uint64]bool) error {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		link, err := os.Readlink(dir + "/" + e.Name())
		if err != nil {
			continue
		}
		if rest, ok := strings.CutPrefix(link, "socket:["); ok {
			if ino, err := strconv.ParseUint(strings.TrimSuffix(rest, "]"), 10, 64); err == nil {
				inodes[ino] = true
			}
		}
	}
	return nil
}

// NetNamespace names pid's network namespace (the link /proc/<pid>/ns/net, net:[<inode>]): two
// processes with the same name share it.
func NetNamespace(pid int) (string, error) {
	return os.Readlink("/proc/" + strconv.Itoa(pid) + "/ns/net")
}

// Listener is a listening TCP socket as /proc/<pid>/net/tcp or tcp6 lists it.
type Listener struct {
	// Addr is the address and port it listens on; an IPv4-mapped address (tcp6) in its IPv4
	// form.
	Addr  netip.AddrPort
	Inode uint64
}

// TCPListeners are the listening TCP sockets (IPv4 and IPv6) of pid's network namespace, read
// through /proc/<pid>/net: /proc/net is the reader's own namespace, which need not be pid's.
// A host without IPv6 has no tcp6.
func TCPListeners(pid int) ([]Listener, error) {
	var out []Listener
	for _, name := range []string{"tcp", "tcp6"} {
		f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/net/" + name)
		if name == "tcp6" && errors.Is(err, fs.ErrNotExist) {
			break // tcp was there: no IPv6
		}
		if err != nil {
			return nil, err
		}
		l, err := ParseTCPListeners(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("/proc/%d/net/%s: %w", pid, name, err)
		}
		out = append(out, l...)
	}
	return out, nil
}

// tcpListen is TCP_LISTEN, the st column of a listening socket.
const tcpListen = 0x0A

// ParseTCPListeners reads /proc/net/tcp or tcp6 — a header line, then a socket a line:
//
//	sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
//	 0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 12345 ...
//
// and returns the sockets in state LISTEN. Other states are skipped before their addresses are
// parsed: a busy host lists thousands of connections.
func ParseTCPListeners(r io.Reader) ([]Listener, error) {
	var out []Listener
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		if n == 1 {
			continue // the header
		}
		f := bytes.Fields(sc.Bytes())
		if len(f) == 0 {
			continue
		}
		if len(f) < 10 {
			return nil, fmt.Errorf("line %d: %d fields", n, len(f))
		}
		st, err := strconv.ParseUint(string(f[3]), 16, 8)
		if err != nil {
			return nil, fmt.Errorf("line %d: state %q", n, f[3])
		}
		if st != tcpListen {
			continue
		}
		addr, err := parseHexAddrPort(string(f[1]))
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		ino, err := strconv.ParseUint(string(f[9]), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("line %d: inode %q", n, f[9])
		}
		out = append(out, Listener{Addr: addr, Inode: ino})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// parseHexAddrPort parses an address as /proc/net/tcp prints it: the address in hex (8 digits,
// or 32 for tcp6), a colon, the port in hex (4 digits, host order).
func parseHexAddrPort(s string) (netip.AddrPort, error) {
	a, p, ok := strings.Cut(s, ":")
	if !ok {
		return netip.AddrPort{}, fmt.Errorf("address %q: no port", s)
	}
	b, err := hex.DecodeString(a)
	if err != nil || (len(b) != 4 && len(b) != 16) {
		return netip.AddrPort{}, fmt.Errorf("address %q", s)
	}
	// The kernel prints each 32-bit word of the address (in network order in memory) as a
	// number (%08X): on a little-endian host its bytes come out reversed. Read each back as the
	// number it printed and store it as the host stores it.
	for i := 0; i < len(b); i += 4 {
		binary.NativeEndian.PutUint32(b[i:], binary.BigEndian.Uint32(b[i:]))
	}
	ip, _ := netip.AddrFromSlice(b)
	port, err := strconv.ParseUint(p, 16, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("address %q: port", s)
	}
	return netip.AddrPortFrom(ip.Unmap(), uint16(port)), nil
}
