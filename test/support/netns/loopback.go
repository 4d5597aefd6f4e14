package netns

import (
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"slices"
	"syscall"

	"golang.org/x/sys/unix"
)

// sameNamespace reports whether this process is in the namespace of the kind ("net", "mnt")
// of process pid: the child changes nothing in the namespaces its parent runs in (the
// machine's, usually).
func sameNamespace(pid int, kind string) (bool, error) {
	self, err := os.Readlink("/proc/self/ns/" + kind)
	if err != nil {
		return false, err
	}
	other, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/%s", pid, kind))
	if err != nil {
		return false, err
	}
	return self == other, nil
}

// makeMountsPrivate stops mounts made in this mount namespace (the agent's volumes) from
// propagating to the namespace it was copied from, as `mount --make-rprivate /` does.
func makeMountsPrivate() error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make / private: %w", err)
	}
	return nil
}

// setUpLoopback brings lo up and adds ip/32 to it, as `ip link set lo up; ip addr add
// IP/32 dev lo` would, with rtnetlink requests, then checks that the address is there.
func setUpLoopback(ip net.IP) error {
	ip4 := ip.To4()
	if ip4 == nil {
		return fmt.Errorf("%s is not an IPv4 address", ip)
	}
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		return err
	}
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		return fmt.Errorf("rtnetlink socket: %w", err)
	}
	defer unix.Close(fd)
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return fmt.Errorf("bind rtnetlink socket: %w", err)
	}

	// struct ifinfomsg: family, pad, type, index, flags, change.
	link := make([]byte, unix.SizeofIfInfomsg)
	link[0] = unix.AF_UNSPEC
	binary.NativeEndian.PutUint32(link[4:], uint32(lo.Index))
	binary.NativeEndian.PutUint32(link[8:], unix.IFF_UP)
	binary.NativeEndian.PutUint32(link[12:], unix.IFF_UP)
	if err := rtnetlinkRequest(fd, 1, unix.RTM_NEWLINK, 0, link); err != nil {
		return fmt.Errorf("set lo up: %w", err)
	}

	// struct ifaddrmsg (family, prefix length, flags, scope, index), then IFA_LOCAL and
	// IFA_ADDRESS, each an rtattr (length, type) with the four bytes of the address.
	addr := make([]byte, unix.SizeofIfAddrmsg, unix.SizeofIfAddrmsg+2*(unix.SizeofRtAttr+4))
	addr[0] = unix.AF_INET
	addr[1] = 32
	addr[3] = unix.RT_SCOPE_UNIVERSE
	binary.NativeEndian.PutUint32(addr[4:], uint32(lo.Index))
	for _, typ := range []uint16{unix.IFA_LOCAL, unix.IFA_ADDRESS} {
		addr = binary.NativeEndian.AppendUint16(addr, unix.SizeofRtAttr+4)
		addr = binary.NativeEndian.AppendUint16(addr, typ)
		addr = append(addr, ip4...)
	}
	if err := rtnetlinkRequest(fd, 2, unix.RTM_NEWADDR, unix.NLM_F_CREATE|unix.NLM_F_EXCL, addr); err != nil {
		return fmt.Errorf("add %s/32 to lo: %w", ip, err)
	}

	addrs, err := lo.Addrs()
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(addrs, func(a net.Addr) bool { n, ok := a.(*net.IPNet); return ok && n.IP.Equal(ip) }) {
		return fmt.Errorf("lo has %v after adding %s", addrs, ip)
	}
	return nil
}

// rtnetlinkRequest sends one request asking for an acknowledgement and returns the kernel's
// error, if any.
func rtnetlinkRequest(fd int, seq uint32, typ uint16, flags uint16, body []byte) error {
	msg := make([]byte, unix.SizeofNlMsghdr, unix.SizeofNlMsghdr+len(body))
	binary.NativeEndian.PutUint32(msg[0:], uint32(unix.SizeofNlMsghdr+len(body)))
	binary.NativeEndian.PutUint16(msg[4:], typ)
	binary.NativeEndian.PutUint16(msg[6:], unix.NLM_F_REQUEST|unix.NLM_F_ACK|flags)
	binary.NativeEndian.PutUint32(msg[8:], seq)
	msg = append(msg, body...)
	if err := unix.Sendto(fd, msg, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return err
	}
	buf := make([]byte, 1<<16)
	for {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err != nil {
			return err
		}
		replies, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return err
		}
		for _, r := range replies {
			if r.Header.Seq != seq || r.Header.Type != unix.NLMSG_ERROR {
				continue
			}
			if len(r.Data) < 4 {
				return fmt.Errorf("short netlink error message")
			}
			if errno := int32(binary.NativeEndian.Uint32(r.Data)); errno != 0 {
				return syscall.Errno(-errno)
			}
			return nil // the acknowledgement
		}
	}
}
