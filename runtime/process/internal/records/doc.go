// Package records holds what the process runtime (package process) and the container's
// supervisor (package supervisor) both read and write in a container's directory: the file
// names, the supervisor's view of config.json, state.json, and the atomic JSON writes (a synced temp
// file, a rename and a synced directory, so that a reader — the other side, an agent restarted
// mid-write or after a power loss — sees the old or the new record, never part of one;
// WriteJSONNew, for the first record of a new directory, leaves the directory's sync to a later
// write and may lose the record whole, never in part).
//
// The files outlive both binaries: an agent adopts containers an older supervisor started.
// Fields may be added; none may be renamed or change meaning.
//
// A state that cannot be written is never silently dropped: WriteState tries again for a while,
// and a supervisor that still fails writes UnrecordedLine to its log, where the runtime finds
// the outcome (LastUnrecorded) instead of taking the old "running" for the truth.
//
//	var w records.Workload
//	err := records.ReadJSON(filepath.Join(dir, records.ContainerFile), &w)
//	...
//	err = records.WriteJSONAtomic(filepath.Join(dir, records.StateFile), &records.State{State: records.StateRunning, Pid: pid})
package records
