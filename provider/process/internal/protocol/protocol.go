package process

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// The supervisor's socket speaks one request per connection: a 4-byte big-endian length, then
// the request as JSON, with the file descriptors it hands over (SCM_RIGHTS) on the same
// message. What follows depends on the operation:
//
//	watch   nothing; the supervisor closes the connection after recording the workload's end
//	exec    the supervisor answers one JSON reply (exit code or error) when the command ends;
//	        the client closing first kills the command
//	attach  the client sends terminal sizes (JSON resize, one after another); the supervisor
//	        closes the connection when the workload ends or the
//	        attached stdin does; the client closing first detaches
const (
	opWatch  = "watch"
	opExec   = "exec"
	opAttach = "attach"
)

// Names of the descriptors a request hands over, in request.Fds, in the order they are sent.
const (
	fdStdin  = "stdin"
	fdStdout = "stdout"
	fdStderr = "stderr"
	fdTTY    = "tty" // one pty slave for all three (exec with a terminal)
)

type request struct {
	Op   string   `json:"op"`
	Argv []string `json:"argv,omitempty"`
	Fds  []string `json:"fds,omitempty"`
}

// resize is a client's terminal size on an attach connection.
type resize struct {
	Width  uint16 `json:"width"`
	Height uint16 `json:"height"`
}

type reply struct {
	ExitCode int    `json:"exitCode"`
	Error    string `json:"error,omitempty"`
}

// maxRequest bounds a request so that a confused peer cannot make the supervisor allocate much.
const maxRequest = 1 << 20

// maxFds is the most descriptors one request passes.
const maxFds = 3

func sendRequest(conn *net.UnixConn, req request, files []*os.File) error {
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	msg := binary.BigEndian.AppendUint32(nil, uint32(len(body)))
	msg = append(msg, body...)
	fds := make([]int, len(files))
	for i, f := range files {
		fds[i] = int(f.Fd())
	}
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	n, oobn, err := conn.WriteMsgUnix(msg, oob, nil)
	if err != nil {
		return err
	}
	if oobn != len(oob) {
		return errors.New("descriptors not sent")
	}
	if n < len(msg) {
		_, err = conn.Write(msg[n:])
	}
	return err
}

// receiveRequest reads one request and the descriptors that came with it; the caller owns
// (closes) the files.
func receiveRequest(conn *net.UnixConn) (request, []*os.File, error) {
	var (
		req   request
		files []*os.File
		data  []byte
		buf   = make([]byte, 64*1024)
		oob   = make([]byte, unix.CmsgSpace(maxFds*4))
	)
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	for {
		n, oobn, _, _, err := conn.ReadMsgUnix(buf, oob)
		if oobn > 0 {
			got, perr := parseRights(oob[:oobn])
			files = append(files, got...)
			if perr != nil {
				closeAll()
				return req, nil, perr
			}
		}
		data = append(data, buf[:n]...)
		if len(data) >= 4 {
			size := binary.BigEndian.Uint32(data)
			if size > maxRequest {
				closeAll()
				return req, nil, fmt.Errorf("request of %d bytes", size)
			}
			if len(data) >= 4+int(size) {
				if err := json.Unmarshal(data[4:4+size], &req); err != nil {
					closeAll()
					return req, nil, err
				}
				if len(files) != len(req.Fds) {
					closeAll()
					return req, nil, fmt.Errorf("request names %d descriptors, %d came", len(req.Fds), len(files))
				}
				return req, files, nil
			}
		}
		if err != nil {
			closeAll()
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return req, nil, err
		}
	}
}

func parseRights(oob []byte) ([]*os.File, error) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, err
	}
	var files []*os.File
	for _, m := range msgs {
		fds, err := unix.ParseUnixRights(&m)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			unix.CloseOnExec(fd)
			files = append(files, os.NewFile(uintptr(fd), "passed-fd-"+strconv.Itoa(fd)))
		}
	}
	return files, nil
}

// maxSocketPath is what fits in sockaddr_un's sun_path with its terminating NUL.
const maxSocketPath = 107

// socketAddress returns a path to dir/sock usable in a sockaddr_un: the path itself when it is
// short enough, else /proc/self/fd/N/sock through an O_PATH descriptor of dir, which release
// (call it once the bind or connect is done) closes.
func socketAddress(dir string) (addr string, release func(), err error) {
	path := filepath.Join(dir, socketFile)
	if len(path) <= maxSocketPath {
		return path, func() {}, nil
	}
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	return "/proc/self/fd/" + strconv.Itoa(fd) + "/" + socketFile, func() { unix.Close(fd) }, nil
}

// dialSupervisor connects to the supervisor of the container in dir.
func dialSupervisor(dir string) (*net.UnixConn, error) {
	addr, release, err := socketAddress(dir)
	if err != nil {
		return nil, err
	}
	defer release()
	return net.DialUnix("unix", nil, &net.UnixAddr{Name: addr, Net: "unix"})
}

// listenSupervisor binds dir/sock for the supervisor.
func listenSupervisor(dir string) (*net.UnixListener, error) {
	addr, release, err := socketAddress(dir)
	if err != nil {
		return nil, err
	}
	defer release()
	_ = os.Remove(filepath.Join(dir, socketFile)) // a previous supervisor's, if any
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: addr, Net: "unix"})
	if err != nil {
		return nil, err
	}
	// The listener must not unlink by its (possibly /proc/self/fd) name on Close.
	l.SetUnlinkOnClose(false)
	return l, nil
}
