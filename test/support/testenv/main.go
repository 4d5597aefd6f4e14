package testenv

import (
	"context"
	"fmt"
	"os"
	"testing"
)

// Main starts one control plane for a test package, stores it in *env, runs the tests and
// stops it. The directory with both logs is kept when a test failed. Use it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(testenv.Main(m, &env)) }
func Main(m *testing.M, env **Env, opts ...Options) int {
	e, err := Start(context.Background(), append(opts, Options{})[0]) // the first, or none
	if err != nil {
		fmt.Fprintf(os.Stderr, "testenv: %v\n", err)
		return 1
	}
	*env = e
	code := m.Run()
	e.Stop(code != 0)
	if code != 0 {
		fmt.Fprintf(os.Stderr, "testenv: control-plane logs kept in %s\n", e.Dir)
	}
	return code
}
