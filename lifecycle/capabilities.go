package lifecycle

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync"

	"k8s.io/klog/v2"
	utilexec "k8s.io/utils/exec"

	"github.com/vk-static/vk-static/containerlog"
	"github.com/vk-static/vk-static/provider"
)

// GetContainerLogs streams a container's log from the files its runtime writes (package
// containerlog reads them: since, tail, limit, timestamps, follow). Follow ends when the
// instance exits.
func (p *Provider) GetContainerLogs(ctx context.Context, namespace, podName, containerName string, opts provider.ContainerLogOpts) (io.ReadCloser, error) {
	p.mu.Lock()
	st, ok := p.byNameLocked(namespace, podName)
	if !ok {
		p.mu.Unlock()
		return nil, provider.NotFound("pod %s/%s", namespace, podName)
	}
	if containerSpec(st.pod, containerName) == nil {
		p.mu.Unlock()
		return nil, provider.NotFound("container %q in pod %s/%s", containerName, namespace, podName)
	}
	rec := st.containers[containerName]
	var inst *ContainerStatus
	done := closedChannel()
	switch {
	case rec == nil || rec.current == nil:
	case opts.Previous:
		inst = rec.previous
	default:
		inst = rec.current
		if rec.exited != nil {
			done = rec.exited
		}
	}
	p.mu.Unlock()
	if inst == nil {
		if opts.Previous {
			return nil, provider.NotFound("previous terminated container %q in pod %s/%s", containerName, namespace, podName)
		}
		return nil, provider.NotFound("container %q in pod %s/%s has not started yet", containerName, namespace, podName)
	}
	return containerlog.Open(ctx, inst.LogPath, opts, done)
}

// RunInContainer runs cmd in a running container through the runtime.
func (p *Provider) RunInContainer(ctx context.Context, namespace, podName, containerName string, cmd []string, attach provider.AttachIO) error {
	id, err := p.runningContainer(namespace, podName, containerName)
	if err != nil {
		return err
	}
	if len(cmd) == 0 {
		return provider.InvalidInput("exec in %s/%s: no command", namespace, podName)
	}
	return p.rt.Exec(ctx, id, cmd, attach)
}

// AttachToContainer joins a running container's stdio through the runtime.
func (p *Provider) AttachToContainer(ctx context.Context, namespace, podName, containerName string, attach provider.AttachIO) error {
	id, err := p.runningContainer(namespace, podName, containerName)
	if err != nil {
		return err
	}
	return p.rt.Attach(ctx, id, attach)
}

// PortForward connects stream to a port of the pod's network.
func (p *Provider) PortForward(ctx context.Context, namespace, podName string, port int32, stream io.ReadWriteCloser) error {
	p.mu.Lock()
	st, ok := p.byNameLocked(namespace, podName)
	var sandboxID string
	if ok {
		sandboxID = st.sandboxID
	}
	p.mu.Unlock()
	switch {
	case !ok:
		return provider.NotFound("pod %s/%s", namespace, podName)
	case sandboxID == "":
		return errors.New("the pod's sandbox is not running")
	}
	return p.rt.PortForward(ctx, sandboxID, port, stream)
}

// runningContainer is the runtime ID of a container's running instance.
func (p *Provider) runningContainer(namespace, podName, containerName string) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	st, ok := p.byNameLocked(namespace, podName)
	if !ok {
		return "", provider.NotFound("pod %s/%s", namespace, podName)
	}
	if containerSpec(st.pod, containerName) == nil {
		return "", provider.NotFound("container %q in pod %s/%s", containerName, namespace, podName)
	}
	rec := st.containers[containerName]
	if !rec.running() {
		return "", errors.New("container " + containerName + " is not running")
	}
	return rec.current.ID, nil
}

// execCapture runs cmd in instance id for a probe or hook: combined output and exit code.
func (p *Provider) execCapture(ctx context.Context, id string, cmd []string) ([]byte, int, error) {
	out := &lockedBuffer{}
	err := p.rt.Exec(ctx, id, cmd, captureIO{out})
	var exitErr utilexec.ExitError
	switch {
	case err == nil:
		return out.Bytes(), 0, nil
	case errors.As(err, &exitErr):
		return out.Bytes(), exitErr.ExitStatus(), nil
	}
	klog.FromContext(ctx).V(4).Info("Exec for a probe or hook failed", "containerID", id, "err", err)
	return out.Bytes(), -1, err
}

// captureIO is an exec's streams into one buffer, no stdin, no terminal.
type captureIO struct{ out *lockedBuffer }

func (c captureIO) Stdin() io.Reader                 { return nil }
func (c captureIO) Stdout() io.WriteCloser           { return c.out }
func (c captureIO) Stderr() io.WriteCloser           { return c.out }
func (c captureIO) TTY() bool                        { return false }
func (c captureIO) Resize() <-chan provider.TermSize { return nil }

// lockedBuffer collects stdout and stderr, written from two goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(data []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(data)
}

func (b *lockedBuffer) Close() error { return nil }

func (b *lockedBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}

func closedChannel() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}
