package mock

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	utilexec "k8s.io/utils/exec"

	"github.com/vk-static/vk-static/provider"
)

var _ provider.ContainerExecHandler = (*Provider)(nil)

// ExitCodeNotFound is the exit code of a command the simulator does not have, as a shell's.
const ExitCodeNotFound = 127

// ExitCodeKilled is the exit code of a command still running when its container stopped: it was
// killed (SIGKILL), as the container runtime kills what is left at the end of the grace period.
const ExitCodeKilled = 137

// RunInContainer runs one of the simulator's built-in commands (see the package documentation)
// in a running container. The command's name is matched without its directory, so /bin/echo is
// echo.
func (p *Provider) RunInContainer(ctx context.Context, namespace, podName, containerName string, cmd []string, attach provider.AttachIO) error {
	if len(cmd) == 0 {
		return provider.InvalidInput("mock: exec in pod %s/%s: no command", namespace, podName)
	}
	rc, err := p.runningContainer(namespace, podName, containerName)
	if err != nil {
		return err
	}
	stdout, stderr := outputs(attach)
	args := cmd[1:]
	switch path.Base(cmd[0]) {
	case "echo":
		_, err := io.WriteString(stdout, strings.Join(args, " ")+"\n")
		return err
	case "cat":
		in := attach.Stdin()
		if in == nil {
			return nil // cat </dev/null
		}
		err := echo(ctx, in, stdout, rc.stopped)
		if errors.Is(err, errStopped) {
			return utilexec.CodeExitError{Err: fmt.Errorf("mock: cat killed: container %s stopped", containerName), Code: ExitCodeKilled}
		}
		return err
	case "env":
		var b strings.Builder
		for _, v := range rc.container.env {
			if v.ValueFrom == nil { // only literal values: the simulator resolves no references
				b.WriteString(v.Name + "=" + v.Value + "\n")
			}
		}
		_, err := io.WriteString(stdout, b.String())
		return err
	case "hostname":
		host := rc.pod.hostname
		if host == "" {
			host = rc.pod.name
		}
		_, err := io.WriteString(stdout, host+"\n")
		return err
	}
	if _, err := fmt.Fprintf(stderr, "%s: command not found\n", cmd[0]); err != nil {
		return err
	}
	return utilexec.CodeExitError{Err: fmt.Errorf("mock: %s: command not found", cmd[0]), Code: ExitCodeNotFound}
}

// outputs returns where a command's output and errors go: the client's streams, its one
// terminal (stdout) for both with a TTY, nowhere for a stream it did not ask for.
func outputs(attach provider.AttachIO) (stdout, stderr io.Writer) {
	stdout, stderr = io.Discard, io.Discard
	if w := attach.Stdout(); w != nil {
		stdout = w
	}
	if w := attach.Stderr(); w != nil {
		stderr = w
	} else if attach.TTY() {
		stderr = stdout
	}
	return stdout, stderr
}

// runningContainer is a running container found for exec or attach: its pod and spec (stored
// objects, which are never modified, so they are read without the lock) and a channel closed
// when this instance of it stops.
type runningContainer struct {
	pod       *podRecord
	container *keptContainer
	stopped   <-chan struct{}
}

func (p *Provider) runningContainer(namespace, podName, containerName string) (runningContainer, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e, ok := p.pods[podKey{namespace: namespace, name: podName}]
	if !ok {
		return runningContainer{}, provider.NotFound("mock: pod %s/%s", namespace, podName)
	}
	pod := e.rec
	c := findContainer(pod.containers, containerName)
	cs := findStatus(pod.status.containerStatuses, containerName)
	if c == nil {
		c = findContainer(pod.initContainers, containerName)
		cs = findStatus(pod.status.initContainerStatuses, containerName)
	}
	if c == nil {
		return runningContainer{}, provider.NotFound("mock: container %s in pod %s/%s", containerName, namespace, podName)
	}
	cl := e.logLocked(containerName)
	if cs == nil || cs.State.Running == nil || cl == nil {
		return runningContainer{}, fmt.Errorf("mock: container %s of pod %s/%s is not running", containerName, namespace, podName)
	}
	return runningContainer{pod: pod, container: c, stopped: cl.current.doneLocked()}, nil
}

func findContainer(containers []keptContainer, name string) *keptContainer {
	for i := range containers {
		if containers[i].name == name {
			return &containers[i]
		}
	}
	return nil
}
