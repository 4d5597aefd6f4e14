package protocol

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

	"github.com/vk-static/vk-static/runtime/process/internal/records"
)

// The supervisor's socket speaks one request per connection: a 4-byte big-endian length, then
// the request as JSON, with the file descriptors it hands over (SCM_RIGHTS) on the same
// message. What follows depends on the operation:
//
//	watch   nothing; the supervisor closes the connection after recording the workload's end
//	exec    the supervisor answers one JSON Reply (exit code or error) when the command ends;
//	        the client closing first kills the command
//	attach  the client sends terminal sizes (JSON Resize, one after another); the supervisor
//	        closes the connection when the workload ends or the
//	        attached stdin does; the client closing first detaches
const (
	OpWatch  = "watch"
	OpExec   = "exec"
	OpAttach = "attach"
)

// Names of the descriptors a request hands over, in Request.Fds, in the order they are sent.
const (
	FdStdin  = "stdin"
	FdStdout = "stdout"
	FdStderr = "stderr"
	FdTTY    = "tty" // one pty slave for all three (exec with a terminal)
)

// Request opens a connection: the operation, the command (exec) and the names of the
// descriptors sent with it.
type Request struct {
	Op   string   `json:"op"`
	Argv []string `json:"argv,omitempty"`
	Fds  []string `json:"fds,omitempty"`
}

// Resize is a client's terminal size on an attach connection.
type Resize struct {
	Width  uint16 `json:"width"`
	Height uint16 `json:"height"`
}

// Reply ends an exec: the command's exit code (128+signal when a signal ended it) or why it
// could not run.
type Reply struct {
	ExitCode int    `json:"exitCode"`
	Error    string `json:"error,omitempty"`
}

// maxRequest bounds a request so that a confused peer cannot make the supervisor allocate much.
const maxRequest = 1 << 20

// maxFds is the most descriptors one request passes.
const maxFds = 3

// SendRequest sends req on conn with files as its descriptors (in req.Fds's order).
func SendRequest(conn *net.UnixConn, req Request, files []*os.File) error {
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

// ReceiveRequest reads one request and the descriptors that came with it; the caller owns
// (closes) the files.
func ReceiveRequest(conn *net.UnixConn) (Request, []*os.File, error) {
	var (
		req   Request
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

// MaxSocketPath is what fits in sockaddr_un's sun_path with its terminating NUL.
const MaxSocketPath = 107

// socketAddress returns a path to dir/sock usable in a sockaddr_un: the path itself when it is
// short enough, else /proc/self/fd/N/sock through an O_PATH descriptor of dir, which release
// (call it once the bind or connect is done) closes.
func socketAddress(dir string) (addr string, release func(), err error) {
	path := filepath.Join(dir, records.SocketFile)
	if len(path) <= MaxSocketPath {
		return path, func() {}, nil
	}
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	return "/proc/self/fd/" + strconv.Itoa(fd) + "/" + records.SocketFile, func() { unix.Close(fd) }, nil
}

// Dial connects to the supervisor of the container in dir.
func Dial(dir string) (*net.UnixConn, error) {
	addr, release, err := socketAddress(dir)
	if err != nil {
		return nil, err
	}
	defer release()
	return net.DialUnix("unix", nil, &net.UnixAddr{Name: addr, Net: "unix"})
}

// Listen binds dir/sock for the supervisor.
func Listen(dir string) (*net.UnixListener, error) {
	addr, release, err := socketAddress(dir)
	if err != nil {
		return nil, err
	}
	defer release()
	_ = os.Remove(filepath.Join(dir, records.SocketFile)) // a previous supervisor's, if any
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: addr, Net: "unix"})
	if err != nil {
		return nil, err
	}
	// The listener must not unlink by its (possibly /proc/self/fd) name on Close.
	l.SetUnlinkOnClose(false)
	return l, nil
}
