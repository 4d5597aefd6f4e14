package supervisor

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vk-static/vk-static/containerlog/logwriter"
	"github.com/vk-static/vk-static/runtime/process/internal/procfs"
	"github.com/vk-static/vk-static/runtime/process/internal/protocol"
	"github.com/vk-static/vk-static/runtime/process/internal/pty"
	"github.com/vk-static/vk-static/runtime/process/internal/records"
)

// Requested returns the container directory the runtime started this process to supervise
// (protocol.EnvName in its environment), and whether it did.
func Requested() (dir string, ok bool) {
	return os.LookupEnv(protocol.EnvName)
}

// OutputDrainTimeout bounds how long, after the workload ended and its process group was
// killed, the supervisor waits for the rest of its output: a process that left the group (a
// daemon) may hold the pipes open forever.
const OutputDrainTimeout = 2 * time.Second

// supervisor is one container's supervisor process.
type supervisor struct {
	dir    string
	rec    records.Workload
	log    *logwriter.Writer
	launch *launcher

	mu sync.Mutex
	// exited: the workload has ended (no more execs or attaches); recorded: its end is in
	// state.json, and a watch connection is closed at once.
	exited   bool
	recorded bool
	// execsRefused says why no exec may run: the launcher could not join the PID namespace
	// of the workload, which would leave an exec in the host's.
	execsRefused error
	watchers     map[net.Conn]struct{}
	attached     map[*attachment]struct{}
	execs        map[int]struct{} // process groups of running execs
	// stdin is the workload's stdin as the supervisor writes it (a pipe, or the pty master);
	// nil without Config.Stdin or once closed (StdinOnce).
	stdin *os.File
	// master is the workload's terminal (TTY), which attach resizes.
	master *os.File
}

// Run supervises the container in dir — starts its workload, records its start and end, serves
// the runtime's socket — and returns the process's exit code once the workload's end is recorded.
// Call it first thing in main(), before flags are parsed or goroutines started, and exit with
// what it returns: it takes over the process's signals and inherited descriptors.
func Run(dir string) int {
	// The agent signals the workload's group; the supervisor must outlive that, a terminal
	// hangup and the agent's own death. Notify (rather than Ignore) keeps the workload's
	// signals at their defaults: ignored signals would be inherited across exec.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM, syscall.SIGPIPE)

	// Descriptors the agent inherited and passed on (Go closes none) are not the workload's.
	closeOnExecFrom(protocol.ReportFd)
	// fd 3 is the runtime's report and watch connection; the workload must not inherit it (it
	// is close-on-exec now), or the runtime's watch would not end with the supervisor.
	reportFile := os.NewFile(protocol.ReportFd, "report")
	report, err := net.FileConn(reportFile) // a close-on-exec duplicate
	reportFile.Close()
	if err != nil {
		return 1 // not started by the runtime; nobody to tell
	}
	s := &supervisor{dir: dir, launch: newLauncher(), watchers: map[net.Conn]struct{}{report: {}}, attached: map[*attachment]struct{}{}, execs: map[int]struct{}{}}
	// From here on the container directory is reached through a descriptor: the container's
	// mounts may hide its path (pinDir).
	pinned, err := pinDir(dir)
	if err != nil {
		s.startFailed(report, err)
		return 1
	}
	s.dir = pinned
	cmd, outputs, err := s.start()
	if err != nil {
		s.startFailed(report, err)
		return 1
	}
	st := &records.State{State: records.StateRunning, SupervisorPID: os.Getpid(), Pid: cmd.Process.Pid, StartedAt: time.Now()}
	if ps, err := procfs.ReadStat(st.Pid); err == nil {
		st.PidStartTime = ps.StartTime
	}
	if err := records.WriteState(s.dir, st); err != nil {
		_ = syscall.Kill(-st.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		s.startFailed(report, fmt.Errorf("record the start: %w", err))
		return 1
	}
	_ = protocol.WriteStartReport(report, protocol.StartReport{Pid: st.Pid, PidStartTime: st.PidStartTime})

	exitCode := s.waitWorkload(cmd)
	s.drain(outputs)
	st.State, st.FinishedAt, st.ExitCode = records.StateExited, time.Now(), exitCode
	if s.log != nil {
		if err := s.log.Close(); err != nil {
			st.Message = "closing the log: " + err.Error()
		}
	}
	s.recordEnd(st)
	s.shutdown()
	return 0
}

// recordEnd writes the workload's end to state.json, trying again while it fails. When it
// cannot, the end goes to the supervisor's own log (its stderr) instead, exit code and all,
// where the runtime finds it (records.LastUnrecorded): state.json still says "running", and a
// runtime that took that for the truth would report the supervisor lost — exit code 255 — in
// place of the workload's own.
func (s *supervisor) recordEnd(st *records.State) {
	if err := records.WriteState(s.dir, st); err != nil {
		_, _ = io.WriteString(os.Stderr, records.UnrecordedLine(st, err))
	}
}

// start prepares the log, the mounts and the socket, and starts the workload. It returns the
// workload's output copies, which end at its output's end.
func (s *supervisor) start() (*exec.Cmd, *sync.WaitGroup, error) {
	if err := records.ReadJSON(filepath.Join(s.dir, records.ContainerFile), &s.rec); err != nil {
		return nil, nil, err
	}
	cfg := &s.rec.Config
	var logOut, logErr io.Writer = io.Discard, io.Discard
	if cfg.LogPath != "" {
		// Rotation reopens the log by name after the mounts, which may hide its path.
		path, err := pinFile(cfg.LogPath)
		if err != nil {
			return nil, nil, err
		}
		w, err := logwriter.New(path, logwriter.Options{MaxSize: s.rec.LogMaxSize, MaxFiles: s.rec.LogMaxFiles})
		if err != nil {
			return nil, nil, err
		}
		s.log, logOut, logErr = w, w.Stdout(), w.Stderr()
	}
	if err := setupMounts(cfg.Mounts, &s.rec.Sandbox); err != nil {
		return nil, nil, err
	}
	if err := s.launch.do(func() error { return enterSandbox(&s.rec.Sandbox) }); err != nil {
		return nil, nil, err
	}
	listener, err := protocol.Listen(s.dir)
	if err != nil {
		return nil, nil, fmt.Errorf("supervisor socket: %w", err)
	}

	cmd, err := s.command(cfg.Argv())
	if err != nil {
		return nil, nil, err
	}
	outputs := &sync.WaitGroup{}
	var childEnds []*os.File
	if cfg.TTY {
		master, slave, err := pty.Open()
		if err != nil {
			return nil, nil, err
		}
		cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
		cmd.SysProcAttr.Setctty, cmd.SysProcAttr.Ctty = true, 0
		childEnds = append(childEnds, slave)
		s.master = master
		if cfg.Stdin {
			s.stdin = master
		}
		s.copyOutput(outputs, master, logOut, false, master)
	} else {
		outR, outW, err := os.Pipe()
		if err != nil {
			return nil, nil, err
		}
		errR, errW, err := os.Pipe()
		if err != nil {
			return nil, nil, err
		}
		cmd.Stdout, cmd.Stderr = outW, errW
		childEnds = append(childEnds, outW, errW)
		if cfg.Stdin {
			inR, inW, err := os.Pipe()
			if err != nil {
				return nil, nil, err
			}
			cmd.Stdin, s.stdin = inR, inW
			childEnds = append(childEnds, inR)
		}
		s.copyOutput(outputs, outR, logOut, false, nil)
		s.copyOutput(outputs, errR, logErr, true, nil)
	}
	err = s.startWorkload(cmd)
	for _, f := range childEnds {
		f.Close()
	}
	if err != nil {
		return nil, nil, err
	}
	if ownPIDNamespace(&s.rec.Sandbox) {
		// Execs join the namespace the workload is PID 1 of; should the workload be gone
		// already, none may run.
		st, err := procfs.ReadStat(cmd.Process.Pid)
		if err == nil {
			err = s.launch.do(func() error { return joinOwnPIDNamespace(cmd.Process.Pid, st.StartTime) })
		}
		s.execsRefused = err
	}
	go s.serve(listener)
	return cmd, outputs, nil
}

// startWorkload starts the workload, in its container's cgroup: forked there by a thread that
// joined it (launcher.startInCgroup, v1), else as startInCgroup starts any command.
func (s *supervisor) startWorkload(cmd *exec.Cmd) error {
	// The thread startInCgroup forks from is not the launcher's: it has neither the sandbox's
	// no_new_privs nor its namespaces.
	if dirs := cgroupV1Dirs(s.rec.Cgroups); len(dirs) > 0 && s.rec.Sandbox.IsZero() {
		if err := s.launch.startInCgroup(cmd, dirs); !errors.Is(err, errNotJoined) {
			return err
		}
	}
	if ownPIDNamespace(&s.rec.Sandbox) {
		cmd.SysProcAttr.Cloneflags |= unix.CLONE_NEWPID // the init helper is its PID 1, and executes the workload in its place
	}
	return s.startInCgroup(cmd)
}

// command builds an exec.Cmd for argv as the container runs things: its environment, working
// directory and user, in a session of its own.
func (s *supervisor) command(argv []string) (*exec.Cmd, error) {
	cfg := &s.rec.Config
	if len(argv) == 0 {
		return nil, errors.New("no command")
	}
	path, err := lookPath(argv[0], cfg.Env)
	if err != nil {
		return nil, err
	}
	dir := cfg.WorkingDir
	if dir == "" {
		dir = "/"
	}
	if fi, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("working directory: %w", err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("working directory %s is not a directory", dir)
	}
	cmd := &exec.Cmd{Path: path, Args: argv, Env: s.env(), Dir: dir}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if s.rec.SetCredentials {
		cred := &syscall.Credential{Uid: uint32(s.rec.User.UID), Gid: uint32(s.rec.User.GID), Groups: []uint32{}}
		for _, g := range s.rec.User.SupplementalGroups {
			cred.Groups = append(cred.Groups, uint32(g))
		}
		cmd.SysProcAttr.Credential = cred
	}
	return cmd, nil
}

// copyOutput copies one of the workload's outputs to the log and to every attached client.
// pty is the master when r is one: reading it fails with EIO, not EOF, at the end.
func (s *supervisor) copyOutput(wg *sync.WaitGroup, r *os.File, log io.Writer, stderr bool, pty *os.File) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer func() {
			if pty == nil {
				r.Close()
			}
		}()
		buf := make([]byte, 32*1024)
		for {
			n, err := r.Read(buf)
			if n > 0 {
				_, _ = log.Write(buf[:n]) // a log error loses these bytes; keep draining
				s.toAttached(buf[:n], stderr)
			}
			if err != nil {
				return
			}
		}
	}()
}

// waitWorkload waits for the workload to end and returns its exit code (128+signal when a
// signal ended it). Before reaping it, it kills what is left of its process group, as the end
// of a container's PID namespace would: while the workload is a zombie its pid, the group's id,
// cannot be reused, so the kill reaches only the group.
func (s *supervisor) waitWorkload(cmd *exec.Cmd) int32 {
	pid := cmd.Process.Pid
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err == nil || !errors.Is(err, unix.EINTR) {
			break
		}
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	_ = cmd.Wait()
	s.mu.Lock()
	s.exited = true
	s.mu.Unlock()
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	switch {
	case !ok:
		return int32(cmd.ProcessState.ExitCode())
	case ws.Signaled():
		return 128 + int32(ws.Signal())
	default:
		return int32(ws.ExitStatus())
	}
}

// drain waits for the workload's output to end, for OutputDrainTimeout at most.
func (s *supervisor) drain(outputs *sync.WaitGroup) {
	done := make(chan struct{})
	go func() { outputs.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(OutputDrainTimeout):
	}
}

// shutdown ends every exec the container still runs, every attach and watch connection (a
// watcher's EOF means "read state.json"), and then the supervisor returns.
func (s *supervisor) shutdown() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recorded = true
	for pgid := range s.execs {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
	for a := range s.attached {
		a.closeLocked()
	}
	for c := range s.watchers {
		c.Close()
	}
	if s.stdin != nil {
		s.stdin.Close()
		s.stdin = nil
	}
}

// startFailed records a start that failed (Exited, 128, StartError) and tells the runtime.
func (s *supervisor) startFailed(report net.Conn, cause error) {
	now := time.Now()
	st := &records.State{State: records.StateExited, SupervisorPID: os.Getpid(), StartedAt: now, FinishedAt: now,
		ExitCode: records.StartErrorExitCode, Reason: records.ReasonStartError, Message: cause.Error()}
	if s.log != nil {
		_ = s.log.Close()
	}
	werr := records.WriteState(s.dir, st)
	msg := cause.Error()
	if werr != nil {
		msg += " (and recording it failed: " + werr.Error() + ")"
		_, _ = io.WriteString(os.Stderr, records.UnrecordedLine(st, werr))
	}
	_ = protocol.WriteStartReport(report, protocol.StartReport{Error: msg})
	report.Close()
}

// closeOnExecFrom marks every descriptor from fd up close-on-exec.
func closeOnExecFrom(fd int) {
	if err := unix.CloseRange(uint(fd), ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err == nil {
		return
	}
	entries, _ := os.ReadDir("/proc/self/fd") // kernels before 5.11
	for _, e := range entries {
		if n, err := strconv.Atoi(e.Name()); err == nil && n >= fd {
			unix.CloseOnExec(n)
		}
	}
}
