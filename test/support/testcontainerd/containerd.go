package testcontainerd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	criclient "k8s.io/cri-client/pkg"

	"github.com/vk-static/vk-static/test/support/childproc"
	"github.com/vk-static/vk-static/test/support/testimage"
)

// SandboxImage is the sandbox ("pause") image of every instance, imported by Start: a
// testimage with Cmd ["pause"]. Its name is in no registry, so nothing is ever pulled for it.
const SandboxImage = "localhost/vk-static/pause:1"

// Options configure Start. The zero value runs host-network pods only (no CNI network:
// NetworkReady is false).
type Options struct {
	// LoopbackCNI gives containerd a loopback-only CNI network (the plugin copied from the
	// containernetworking-plugins package): the runtime then reports NetworkReady, which the
	// kubelet needs; pods still have no network beyond their lo.
	LoopbackCNI bool
	// Bridge, if set, gives pods a network of their own (see Bridge): pod-network sandboxes
	// get an address of Bridge.Subnet, host ports work, and NetworkReady is true. Only in a
	// network namespace of the test's own (test/support/netns); LoopbackCNI is then ignored.
	Bridge *Bridge
}

// Containerd is a running throwaway containerd. Its methods are not safe for concurrent use.
type Containerd struct {
	paths  layout
	bin    binaries
	bridge *Bridge            // nil without a Bridge network
	proc   *childproc.Process // nil while stopped (after Kill, before Restart)
}

// startTimeout bounds containerd's start-up: it answers in well under a second here.
const startTimeout = 30 * time.Second

// Start writes the configuration, starts containerd with everything in a new temporary
// directory, waits until its CRI plugin answers Version and reports RuntimeReady, and imports
// SandboxImage. On an error nothing is left behind.
func Start(ctx context.Context, opts Options) (_ *Containerd, err error) {
	var plugins []string
	var bridge *Bridge
	switch {
	case opts.Bridge != nil:
		b := *opts.Bridge
		if err := b.validate(); err != nil {
			return nil, err
		}
		if err := onlyOwnLinks(b.Name); err != nil {
			return nil, err
		}
		bridge, plugins = &b, bridgePlugins
	case opts.LoopbackCNI:
		plugins = []string{"loopback"}
	}
	bin, err := findBinaries(plugins)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "vk-static-containerd-")
	if err != nil {
		return nil, err
	}
	c := &Containerd{paths: newLayout(dir), bin: bin, bridge: bridge}
	defer func() {
		if err != nil {
			err = fmt.Errorf("%w%s", err, c.logTail())
			if stopErr := c.Stop(); stopErr != nil {
				err = errors.Join(err, stopErr)
			}
		}
	}()
	if err := c.paths.write(bin, bridge); err != nil {
		return nil, err
	}
	if err := c.start(ctx); err != nil {
		return nil, err
	}
	pause, err := testimage.Build(testimage.Options{Cmd: []string{"pause"}})
	if err != nil {
		return nil, err
	}
	if err := testimage.Import(ctx, c, SandboxImage, pause); err != nil {
		return nil, fmt.Errorf("import the sandbox image: %w", err)
	}
	return c, nil
}

// Endpoint is the CRI endpoint, "unix:///…/containerd.sock" (the kubelet's
// --container-runtime-endpoint).
func (c *Containerd) Endpoint() string { return "unix://" + c.Address() }

// Address is containerd's socket path (ctr --address).
func (c *Containerd) Address() string { return c.paths.Address }

// Root is containerd's root directory (images, snapshots, its database).
func (c *Containerd) Root() string { return c.paths.Root }

// Dir is the instance's directory: configuration, containerd.log, root, state, runc's state,
// the CNI directories. Stop removes it.
func (c *Containerd) Dir() string { return c.paths.Dir }

// Bridge is the instance's pod network, with its defaults filled in; nil without one.
func (c *Containerd) Bridge() *Bridge {
	if c.bridge == nil {
		return nil
	}
	b := *c.bridge
	return &b
}

// LogPath is containerd's log file.
func (c *Containerd) LogPath() string { return c.paths.Log }

// PID is containerd's process id, 0 while it is stopped.
func (c *Containerd) PID() int {
	if c.proc == nil {
		return 0
	}
	return c.proc.Pid()
}

// Kill ends containerd with SIGKILL, as a crash would, and waits for it; the shims and
// containers keep running, and Restart starts containerd again on them.
func (c *Containerd) Kill() {
	c.proc.Stop(0)
	c.proc = nil
}

// Restart stops containerd (SIGTERM, as a service manager's restart does; SIGKILL after a few
// seconds) unless Kill did, and starts it again on the same directories: images, sandboxes and
// running containers are kept, as a restart of the host's containerd keeps them. It returns
// once the CRI plugin is ready again.
func (c *Containerd) Restart(ctx context.Context) error {
	c.proc.Stop(stopGrace)
	c.proc = nil
	if err := c.start(ctx); err != nil {
		return fmt.Errorf("%w%s", err, c.logTail())
	}
	return nil
}

// stopGrace is how long containerd may take to exit on SIGTERM.
const stopGrace = 5 * time.Second

func (c *Containerd) start(ctx context.Context) error {
	// containerd alone is signalled: its shims and containers outlive a Kill.
	proc, err := childproc.Start(childproc.Options{Name: "containerd", LogPath: c.paths.Log, Env: []string{"PATH=" + c.bin.path}},
		c.bin.containerd, "--config", c.paths.Config)
	if err != nil {
		return err
	}
	c.proc = proc
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	return c.waitReady(ctx)
}

// waitReady polls until the CRI plugin answers Version and Status reports RuntimeReady.
func (c *Containerd) waitReady(ctx context.Context) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var lastErr error
	for {
		if c.proc.Exited() {
			return fmt.Errorf("containerd exited during start-up: %v", c.proc.Err())
		}
		if lastErr = c.ready(ctx); lastErr == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("containerd not ready: %w (last: %v)", ctx.Err(), lastErr)
		case <-tick.C:
		}
	}
}

func (c *Containerd) ready(ctx context.Context) error {
	if _, err := os.Stat(c.paths.Address); err != nil {
		return err
	}
	rs, err := criclient.NewRemoteRuntimeService(ctx, c.Endpoint(), time.Second, nil, false)
	if err != nil {
		return err
	}
	defer rs.Close(ctx)
	status, err := rs.Status(ctx, false)
	if err != nil {
		return err
	}
	for _, cond := range status.GetStatus().GetConditions() {
		if cond.Type == runtimeapi.RuntimeReady {
			if !cond.Status {
				return fmt.Errorf("RuntimeReady is false: %s %s", cond.Reason, cond.Message)
			}
			return nil
		}
	}
	return errors.New("no RuntimeReady condition in the CRI status")
}

// logTail is the end of containerd's log for an error message ("" when there is none).
func (c *Containerd) logTail() string {
	data, err := os.ReadFile(c.paths.Log)
	if err != nil || len(data) == 0 {
		return ""
	}
	const max = 3000
	if len(data) > max {
		data = data[len(data)-max:]
		data = data[bytes.IndexByte(data, '\n')+1:]
	}
	return "\ncontainerd.log ends with:\n" + string(data)
}
