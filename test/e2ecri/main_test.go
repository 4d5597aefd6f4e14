package e2ecri

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/vk-static/vk-static/internal/agentproc"
	"github.com/vk-static/vk-static/internal/testcontainerd"
	"github.com/vk-static/vk-static/internal/testenv"
	"github.com/vk-static/vk-static/internal/testimage"
)

var (
	env *testenv.Env
	cd  *testcontainerd.Containerd
	// agentBinary is vk-static built with -race for this test run.
	agentBinary string
	// workloadImage is the test workload image in the 127.0.0.1 registry (Cmd pause: pods say
	// the mode in their args); registryHost is that registry's host:port.
	workloadImage, registryHost string
)

func TestMain(m *testing.M) { os.Exit(runTests(m)) }

func runTests(m *testing.M) int {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "vk-static-e2ecri-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if agentBinary, err = agentproc.BuildAgent(dir); err != nil {
		fmt.Fprintln(os.Stderr, "e2ecri:", err)
		return 1
	}

	reg, err := testimage.StartRegistry(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2ecri:", err)
		return 1
	}
	defer reg.Close()
	registryHost = reg.Host()
	img, err := testimage.Build(testimage.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2ecri:", err)
		return 1
	}
	if workloadImage, err = reg.Push(ctx, "test/workload:1", img); err != nil {
		fmt.Fprintln(os.Stderr, "e2ecri:", err)
		return 1
	}

	e, err := testenv.Start(ctx, testenv.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "testenv:", err)
		return 1
	}
	env = e
	code := testcontainerd.Main(m, &cd)
	e.Stop(code != 0)
	if code != 0 {
		fmt.Fprintf(os.Stderr, "testenv: control-plane logs kept in %s\n", e.Dir)
	}
	return code
}
