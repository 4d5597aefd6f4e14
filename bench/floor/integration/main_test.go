// Package integration runs the floor against a real API server, under the Node authorizer and
// NodeRestriction, with a node's own identity: what the floor writes, a node may write.
package integration

import (
	"os"
	"testing"

	"github.com/vk-static/vk-static/test/support/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, &env)) }
