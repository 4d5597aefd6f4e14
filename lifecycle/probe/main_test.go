package probe

import (
	"testing"

	"go.uber.org/goleak"
)

// Every worker, server and connection a test starts must be gone when the tests end.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
