package process

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"runtime"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/vk-static/vk-static/provider"
	"github.com/vk-static/vk-static/runtime/process/internal/procfs"
	"github.com/vk-static/vk-static/runtime/process/internal/records"
)

// PortForward connects stream to port on a TCP socket that a process of the sandbox's pod
// listens on, and to nothing else. A process pod shares the host's network, where the agent's
// own ports (healthz and metrics) and every other host service listen too: dialing whatever
// answers on 127.0.0.1:port would give anyone allowed pods/portforward on any pod the host's
// loopback, reached by the agent as root. So the listening socket must be one that the pod's
// processes hold (podPids, podListeners), and the connection goes to the address it listens on
// (dialAddrs). Every pod is held to it, static pods too: their own ports are reachable, the
// host's are not.
func (r *Runtime) PortForward(ctx context.Context, sandboxID string, port int32, stream io.ReadWriteCloser) error {
	sb, err := r.loadSandbox(sandboxID)
	if err != nil {
		return err
	}
	conn, err := r.dialPod(ctx, sb, port)
	if err != nil {
		return fmt.Errorf("port-forward to port %d: %w", port, err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()

	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, _ = io.Copy(stream, conn)
		// The port's side ended: end the client's too. The other copy's pending Read of
		// stream ends when the caller closes it.
		stream.Close()
	}()
	_, _ = io.Copy(conn, stream)
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.CloseWrite() // the client finished sending; the answer may still come
	}
	wg.Wait()
	return ctx.Err()
}

// notListeningError: no process of the pod listens on the port. It is a NotFound, as a
// stream's missing container is.
type notListeningError struct {
	namespace, name string
	// unread is why some of the pod's processes could not be read, if any: the listener may be
	// one of theirs.
	unread error
}

func (e *notListeningError) Error() string {
	msg := fmt.Sprintf("no process of pod %s/%s listens on it", e.namespace, e.name)
	if e.unread != nil {
		msg += fmt.Sprintf(" (not every process of it could be read: %v)", e.unread)
	}
	return msg
}

func (e *notListeningError) Unwrap() error { return provider.ErrNotFound }

// dialPod connects to port on a socket that a process of the sandbox's pod listens on.
func (r *Runtime) dialPod(ctx context.Context, sb *sandboxRecord, port int32) (net.Conn, error) {
	if port <= 0 || port > 65535 {
		return nil, provider.InvalidInput("not a TCP port")
	}
	pids, err := r.podPids(sb.ID)
	if err != nil {
		return nil, err
	}
	// The network namespace the pod listens in, and the connection is made from: the pod's own
	// on the pod network, else the host's.
	netns, nsPath := "", ""
	if sb.Network {
		if !holderAlive(sb.Holder) {
			return nil, fmt.Errorf("pod %s/%s's network namespace is gone", sb.Config.Namespace, sb.Config.Name)
		}
		nsPath = netnsPath(sb.Holder)
		netns, err = procfs.NetNamespace(sb.Holder.Pid)
	} else {
		netns, err = procfs.NetNamespace(os.Getpid())
	}
	if err != nil {
		return nil, err
	}
	own, others, unread, err := podListeners(pids, uint16(port), netns)
	if err != nil {
		return nil, err
	}
	if len(own) == 0 {
		return nil, &notListeningError{namespace: sb.Config.Namespace, name: sb.Config.Name, unread: unread}
	}
	addrs := dialAddrs(own, others)
	if len(addrs) == 0 {
		return nil, fmt.Errorf("a process outside pod %s/%s listens on it too, and could take the connection", sb.Config.Namespace, sb.Config.Name)
	}
	for _, a := range addrs {
		var conn net.Conn
		if conn, err = dialIn(ctx, nsPath, a.String()); err == nil {
			return conn, nil
		}
	}
	return nil, err
}

// dialIn connects to addr from the network namespace at nsPath ("": the agent's own). A
// socket is of the namespace its creating thread is in, and stays so: the dial runs on a thread
// of its own that joins the namespace, and ends with it (its goroutine returns locked, so Go
// does not reuse the thread), while the connection is used from anywhere.
func dialIn(ctx context.Context, nsPath, addr string) (net.Conn, error) {
	var d net.Dialer
	if nsPath == "" {
		return d.DialContext(ctx, "tcp", addr)
	}
	type dialed struct {
		conn net.Conn
		err  error
	}
	done := make(chan dialed, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread leaves the host's namespace
		fd, err := unix.Open(nsPath, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			done <- dialed{err: fmt.Errorf("the pod's network namespace: %w", err)}
			return
		}
		err = unix.Setns(fd, unix.CLONE_NEWNET)
		unix.Close(fd)
		if err != nil {
			done <- dialed{err: fmt.Errorf("join the pod's network namespace: %w", err)}
			return
		}
		conn, err := d.DialContext(ctx, "tcp", addr)
		done <- dialed{conn, err}
	}()
	res := <-done
	return res.conn, res.err
}

// podPids are the processes of the sandbox's running containers. With a cgroup, that is every
// process in the container's cgroup: the workload, what it started whatever its session, and
// its execs. Without, it is the workload's session, which the runtime's execs (each in a
// session of its own) and a process that called setsid are not in: their listeners are not
// reachable.
func (r *Runtime) podPids(sandboxID string) ([]int, error) {
	ids, err := r.listIDs(containersDir)
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, id := range ids {
		rec, err := r.loadContainer(id)
		if provider.IsNotFound(err) {
			continue // removed meanwhile, or still being created
		}
		if err != nil {
			return nil, err
		}
		if rec.SandboxID != sandboxID {
			continue
		}
		st, err := r.readState(id)
		if err != nil {
			return nil, err
		}
		// A recorded pid that is no longer the workload's is someone else's (or nobody's): the
		// container has ended, or is ending, and has no processes to trust.
		if st == nil || st.State != records.StateRunning || procfs.SameProcess(st.Pid, st.PidStartTime) != nil {
			continue
		}
		if r.cgroups != nil && len(rec.Cgroups) > 0 {
			if p, err := r.cgroups.Pids(rec.Cgroups); err == nil {
				pids = append(pids, p...)
				continue
			}
			// Unreadable (removed meanwhile?): the session is the pod's all the same.
		}
		p, err := procfs.SessionPids(st.Pid)
		if err != nil {
			return nil, err
		}
		// The session id is the leader's pid, not reused while any member lives: if the leader
		// still is the workload, every process found was in its session.
		if procfs.SameProcess(st.Pid, st.PidStartTime) == nil {
			pids = append(pids, p...)
		}
	}
	return pids, nil
}

// podListeners are the TCP sockets listening on port in the network namespace netns (the
// pod's: its own on the pod network, else the host's): own, those that one of pids holds open,
// and others, the rest. Only processes in that namespace count: the connection is dialed from
// there, and 127.0.0.1 in another namespace is another address. The listing is read through one
// of them (/proc/<pid>/net). unread is the first error reading a process other than its being
// gone.
func podListeners(pids []int, port uint16, netns string) (own, others []procfs.Listener, unread, err error) {
	inodes := map[uint64]bool{}
	var inNamespace []int
	for _, pid := range pids {
		if err := procfs.SocketInodes(pid, inodes); err != nil {
			if !errors.Is(err, fs.ErrNotExist) && unread == nil {
				unread = err
			}
			continue
		}
		if ns, err := procfs.NetNamespace(pid); err == nil && ns == netns {
			inNamespace = append(inNamespace, pid)
		}
	}
	if len(inodes) == 0 || len(inNamespace) == 0 {
		return nil, nil, unread, nil
	}
	var all []procfs.Listener
	for _, pid := range inNamespace {
		if all, err = procfs.TCPListeners(pid); err == nil || !errors.Is(err, fs.ErrNotExist) {
			break // read, or failed for a reason the next process would share
		}
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, unread, nil // every one of them is gone
	}
	if err != nil {
		return nil, nil, unread, err
	}
	for _, l := range all {
		switch {
		case l.Addr.Port() != port:
		case inodes[l.Inode]:
			own = append(own, l)
		default:
			others = append(others, l)
		}
	}
	return own, others, unread, nil
}

// dialAddrs are the addresses to connect to for the pod's listeners own, each once, in order:
// the address a listener is bound to, loopback for one on the wildcard address — 127.0.0.1 for
// 0.0.0.0; ::1 for ::, then 127.0.0.1, which reaches a dual-stack socket on a host without IPv6
// loopback. An address where a listener outside the pod (others, on the same port) could take
// the connection instead is left out (taken).
func dialAddrs(own, others []procfs.Listener) []netip.AddrPort {
	var out []netip.AddrPort
	seen := map[netip.AddrPort]bool{}
	for _, l := range own {
		ip := l.Addr.Addr()
		candidates := []netip.Addr{ip}
		if ip.IsUnspecified() {
			candidates = []netip.Addr{netip.AddrFrom4([4]byte{127, 0, 0, 1})}
			if ip.Is6() {
				candidates = []netip.Addr{netip.IPv6Loopback(), candidates[0]}
			}
		}
		for _, c := range candidates {
			a := netip.AddrPortFrom(c, l.Addr.Port())
			if seen[a] || taken(ip, c, others) {
				continue
			}
			seen[a] = true
			out = append(out, a)
		}
	}
	return out
}

// taken reports whether a listener in others could take a connection to addr that the pod's
// listener bound to own is meant to: the kernel gives it to the socket bound to addr itself
// before one on the wildcard address, and shares it among sockets bound alike (SO_REUSEPORT,
// which another process of the same user may set). Between a wildcard socket of the pod's and
// another (0.0.0.0 and a dual-stack ::, say) the outcome is not guessed: the address is left out.
func taken(own, addr netip.Addr, others []procfs.Listener) bool {
	for _, o := range others {
		ip := o.Addr.Addr()
		switch {
		case ip == addr:
			return true // bound to addr itself: as specific as own can be
		case !ip.IsUnspecified():
			// bound to another address
		case ip.Is4() && !addr.Is4():
			// 0.0.0.0 takes no IPv6 connection
		case own.IsUnspecified():
			return true
		}
	}
	return false
}
