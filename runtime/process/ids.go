package process

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
)

// idBytes makes 16 hex digits: short enough that <state-dir>/containers/<id>/sock fits a unix
// socket's 108-byte path in common layouts, long enough never to collide on one node.
const idBytes = 8

func newID() string {
	b := make([]byte, idBytes)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b)
}

// validID rejects ids that are not ours, so that an id can never name a path outside the state
// directory.
func validID(id string) error {
	if len(id) != 2*idBytes || strings.Trim(id, "0123456789abcdef") != "" {
		return errors.New("not a process runtime id")
	}
	return nil
}
