package records

import (
	"bufio"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// State writes are tried stateWriteAttempts times, the delay between them doubling from
// firstStateRetry (1.55 s in all): long enough to ride out a transient failure, short enough
// for the supervisor that is exiting and the runtime call that waits.
const (
	stateWriteAttempts = 6
	firstStateRetry    = 50 * time.Millisecond
)

// WriteState writes st as dir's state.json (WriteJSONAtomic), trying again while it fails, and
// returns the last error. A state that is not written is not a state that never was: the caller
// must report it (UnrecordedLine, the runtime's log) rather than let a reader take the old
// record — "running" — for the truth.
func WriteState(dir string, st *State) error {
	delay := firstStateRetry
	var err error
	for attempt := 1; ; attempt++ {
		if err = WriteJSONAtomic(filepath.Join(dir, StateFile), st); err == nil || attempt == stateWriteAttempts {
			return err
		}
		time.Sleep(delay)
		delay *= 2
	}
}

// ReasonEndNotRecorded is the reason of a container whose supervisor saw the workload end but
// could not write state.json: the exit code is the real one, which the supervisor wrote to its
// log instead (UnrecordedLine) and the runtime took from there.
const ReasonEndNotRecorded = "EndNotRecorded"

// unrecordedMarker starts the line a supervisor writes to its log (SupervisorLogFile) when it
// could not record a state; the rest of the line is an unrecorded, as JSON.
const unrecordedMarker = "vk-static-supervisor: state not recorded: "

type unrecorded struct {
	State *State `json:"state"`
	Error string `json:"error"`
}

// UnrecordedLine is the line a supervisor writes to its log when st could not be written
// (err): it says so, and keeps the outcome for the runtime to report (LastUnrecorded).
func UnrecordedLine(st *State, err error) string {
	data, _ := json.Marshal(unrecorded{State: st, Error: err.Error()}) // plain fields: cannot fail
	return unrecordedMarker + string(data) + "\n"
}

// LastUnrecorded returns the last state the supervisor of the container directory dir could not
// record, from its log, with why it could not; nil when it logged none (or has no log).
func LastUnrecorded(dir string) (*State, string, error) {
	f, err := os.Open(filepath.Join(dir, SupervisorLogFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	var last unrecorded
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 64<<10), 1<<20)
	for s.Scan() {
		rest, ok := strings.CutPrefix(s.Text(), unrecordedMarker)
		if !ok {
			continue
		}
		var u unrecorded
		if json.Unmarshal([]byte(rest), &u) == nil && u.State != nil {
			last = u
		}
	}
	if err := s.Err(); err != nil {
		return nil, "", err
	}
	return last.State, last.Error, nil
}
