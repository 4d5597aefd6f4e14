package integration

import (
	"os"
	"testing"
	"time"

	"github.com/vk-static/vk-static/internal/testenv"
)

// env is the package's control plane, shared by its tests.
var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, &env)) }

// eventually polls f until it succeeds, failing the test with f's last error after 10 s.
func eventually(t *testing.T, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
