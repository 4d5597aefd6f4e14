// Package atomicfile writes a file so that, whatever happens — the writer killed, the machine
// losing power — a reader later finds the old content or the new, never an empty or partial
// file: the data goes to a temporary file in the same directory, which is synced, renamed over
// the target, and the directory is synced so that the rename itself is on disk.
//
// Every record a restart depends on is written this way (the lifecycle's pod records, the
// process runtime's container and sandbox records, the supervisor's state.json). It imports
// only the standard library: the container supervisor links it.
//
//	err := atomicfile.WriteFile(filepath.Join(dir, "pod.json"), data, 0o600)
package atomicfile
