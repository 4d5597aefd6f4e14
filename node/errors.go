package node

import (
	"errors"
)

// errWaitForWatch marks a sync that must be retried because an answer of the API server
// contradicts what the watch shows (AlreadyExists for a mirror the watch lacks, NotFound for one
// it holds): one of them is behind, and deciding again shortly is right either way. It is
// retried with the pod's back-off and logged quietly.
var errWaitForWatch = errors.New("the API server and the watch disagree")
