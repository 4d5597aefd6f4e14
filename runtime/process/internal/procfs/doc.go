// Package procfs reads what the process runtime and the supervisor need from /proc: a process's
// state, session, CPU times and start time (which tells a process from a later one that reuses
// its pid), a session's summed usage and processes, and the sockets a process holds and the TCP
// listeners of its network namespace (port-forward's check that a listener is a pod's).
//
//	st, err := procfs.ReadStat(pid)
//	...
//	if err := procfs.SameProcess(pid, st.StartTime); errors.Is(err, procfs.ErrProcessGone) { ... }
package procfs
