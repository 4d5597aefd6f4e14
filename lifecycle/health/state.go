package health

import (
	"errors"
	"fmt"
	"time"

	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// Errors of the kubelet's runtime state, word for word: the Node's Ready message quotes them.
var (
	errNotChecked   = errors.New("container runtime status check may not have completed yet")
	errRuntimeDown  = errors.New("container runtime is down")
	errNetworkUnset = errors.New("network state unknown") // the kubelet's ErrNetworkUnknown
)

// state is the kubelet's runtimeState: what the last statuses said. Not safe for concurrent
// use; the Monitor guards it.
type state struct {
	lastSync   time.Time // the last status with RuntimeReady true; zero before the first
	threshold  time.Duration
	runtimeErr error
	networkErr error
}

func newState(threshold time.Duration) state {
	return state{threshold: threshold, networkErr: errNetworkUnset}
}

// update folds in one Status answer, as the kubelet's updateRuntimeUp: a failed call changes
// nothing (the runtime is down once lastSync is older than the threshold); NetworkReady is
// recorded before RuntimeReady, and only a RuntimeReady status counts as a sync.
func (s *state) update(st *Status, err error, now time.Time) {
	if err != nil || st == nil {
		return
	}
	if c := st.Condition(NetworkReady); c == nil || !c.Status {
		s.networkErr = fmt.Errorf("container runtime network not ready: %v", c)
	} else {
		s.networkErr = nil
	}
	if c := st.Condition(RuntimeReady); c == nil || !c.Status {
		s.runtimeErr = fmt.Errorf("container runtime not ready: %v", c)
		return
	}
	s.runtimeErr = nil
	s.lastSync = now
}

// runtimeErrors is the kubelet's runtimeErrors: why the runtime cannot run containers (no
// status yet, down for longer than the threshold, RuntimeReady false); nil when it can.
func (s *state) runtimeErrors(now time.Time) error {
	var errs []error
	if s.lastSync.IsZero() {
		errs = append(errs, errNotChecked)
	} else if !s.lastSync.Add(s.threshold).After(now) {
		errs = append(errs, errRuntimeDown)
	}
	if s.runtimeErr != nil {
		errs = append(errs, s.runtimeErr)
	}
	return utilerrors.NewAggregate(errs)
}

// errors is the kubelet's runtimeErrors and networkErrors joined as its ReadyCondition joins
// them; nil when the runtime is ready.
func (s *state) errors(now time.Time) error {
	errs := []error{s.runtimeErrors(now)}
	if s.networkErr != nil {
		errs = append(errs, s.networkErr)
	}
	return utilerrors.NewAggregate(errs)
}
