package mock

import (
	"context"
	"errors"
	"fmt"

	"github.com/vk-static/vk-static/provider"
)

var _ provider.ContainerAttachHandler = (*Provider)(nil)

// AttachToContainer attaches to a running container's simulated process, which has no output
// of its own: it says so in one line (on stderr, or on the terminal with a TTY), then echoes
// stdin to stdout. It returns nil when stdin ends or the container stops, and ctx's error when
// ctx ends; without stdin it waits for one of the latter two.
func (p *Provider) AttachToContainer(ctx context.Context, namespace, podName, containerName string, attach provider.AttachIO) error {
	rc, err := p.runningContainer(namespace, podName, containerName)
	if err != nil {
		return err
	}
	stdout, stderr := outputs(attach)
	if _, err := fmt.Fprintf(stderr, "mock: container %s runs no process and has no output; attached input is echoed\n", containerName); err != nil {
		return err
	}
	in := attach.Stdin()
	if in == nil {
		select {
		case <-rc.stopped:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err := echo(ctx, in, stdout, rc.stopped); !errors.Is(err, errStopped) {
		return err
	}
	return nil
}
