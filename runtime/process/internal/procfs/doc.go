// Package procfs reads what the process runtime and the supervisor need from /proc: a process's
// state, session, CPU times and start time (which tells a process from a later one that reuses
// its pid), and a session's summed usage.
//
//	st, err := procfs.ReadStat(pid)
//	...
//	if err := procfs.SameProcess(pid, st.StartTime); errors.Is(err, procfs.ErrProcessGone) { ... }
package procfs
