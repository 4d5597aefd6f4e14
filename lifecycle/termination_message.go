package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/buffer"

	"github.com/vk-static/vk-static/containerlog"
	"github.com/vk-static/vk-static/provider"
)

// The kubelet's bounds on a termination message (pkg/kubelet/container): what is read of the
// file at terminationMessagePath, and of the log when FallbackToLogsOnError falls back to it.
const (
	maxTerminationMessage          = 4 * 1024
	maxTerminationMessageLogLength = 2 * 1024
	maxTerminationMessageLogLines  = 80
)

// terminationMessageFile is the host file bound at terminationMessagePath in instance attempt
// of container name, below the pod's directory as the kubelet's
// /var/lib/kubelet/pods/<uid>/containers/<name>/<id>. The attempt names it, not a random ID as
// the kubelet's, so that a restarted agent finds it again from the container's status alone.
func (p *Provider) terminationMessageFile(uid types.UID, name string, attempt uint32) string {
	return filepath.Join(p.cfg.podsDir(), string(uid), "containers", name, strconv.FormatUint(uint64(attempt), 10))
}

// terminationMessageMount creates, empty and writable by any user (the container may run as
// anyone), the file an instance of c writes its termination message to, and returns its
// mount. Only a runtime whose containers have a root filesystem of their own (one that runs
// images) gets one: the mount point is made in that filesystem. A runtime of host commands
// shares the host's, where the default /dev/termination-log does not exist and must not be
// created for a pod; its containers' messages come from their logs only
// (FallbackToLogsOnError). As the kubelet, a file that cannot be made is logged and the
// container runs without it.
func (p *Provider) terminationMessageMount(ctx context.Context, pod *corev1.Pod, c *corev1.Container, attempt uint32) (Mount, bool) {
	if _, ownRoot := p.rt.(ImageService); !ownRoot || c.TerminationMessagePath == "" {
		return Mount{}, false
	}
	path := p.terminationMessageFile(pod.UID, c.Name, attempt)
	err := os.MkdirAll(filepath.Dir(path), 0o750)
	if err == nil {
		err = os.WriteFile(path, nil, 0o666) // truncates what an earlier instance left
	}
	if err == nil {
		err = os.Chmod(path, 0o666) // past the umask
	}
	if err != nil {
		klog.FromContext(ctx).Error(err, "Creating the termination message file; the container runs without one", "container", c.Name, "path", path)
		return Mount{}, false
	}
	return Mount{HostPath: path, ContainerPath: c.TerminationMessagePath}, true
}

// addTerminationMessage appends an exited instance's termination message to its Message, as
// the kubelet's convertToKubeContainerStatus: what the container wrote to its
// terminationMessagePath (the last 4096 bytes), or — with FallbackToLogsOnError, a failed exit
// and nothing written — the last 80 lines of its log, at most 2048 bytes. The runtime's own
// message comes first, with ": " between. pod is the spec the instance runs; name its
// container. It reads files, so it is called without the Provider's lock.
func (p *Provider) addTerminationMessage(ctx context.Context, pod *corev1.Pod, name string, cs *ContainerStatus) {
	if cs == nil || cs.State != ContainerExited || pod == nil {
		return
	}
	c := containerSpec(pod, name)
	if c == nil {
		return
	}
	fallbackToLogs := c.TerminationMessagePolicy == corev1.TerminationMessageFallbackToLogsOnError &&
		cs.ExitCode != 0 && cs.Reason != "ContainerCannotRun" // a container that never ran has no log
	msg, checkLogs := "", fallbackToLogs
	if c.TerminationMessagePath != "" {
		msg, checkLogs = readTerminationMessage(p.terminationMessageFile(pod.UID, name, cs.Attempt), fallbackToLogs)
	}
	if checkLogs {
		logPath := cs.LogPath
		if logPath == "" {
			logPath = p.logPath(pod, name, cs.Attempt)
		}
		msg = lastLogLines(ctx, logPath)
	}
	if msg == "" {
		return
	}
	if cs.Message != "" {
		cs.Message += ": "
	}
	cs.Message += msg
}

// readTerminationMessage is the kubelet's getTerminationMessage for a file that was bound (or
// not: a missing file is no message): the message, and whether the log is to be read instead.
func readTerminationMessage(path string, fallbackToLogs bool) (string, bool) {
	data, err := readAtMost(path, maxTerminationMessage)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fallbackToLogs
	case err != nil:
		return fmt.Sprintf("Error on reading termination log %s: %v", path, err), false
	}
	return string(data), fallbackToLogs && len(data) == 0
}

// readAtMost reads the last limit bytes of the file at path.
func readAtMost(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() > limit {
		if _, err := f.Seek(-limit, io.SeekEnd); err != nil {
			return nil, err
		}
	}
	return io.ReadAll(io.LimitReader(f, limit))
}

// lastLogLines is the kubelet's readLastStringFromContainerLogs: the last 80 lines of the log,
// of which the last 2048 bytes.
func lastLogLines(ctx context.Context, path string) string {
	ring, err := buffer.NewTypedRingFixed[byte](maxTerminationMessageLogLength)
	if err != nil {
		return fmt.Sprintf("Error on reading termination message from logs: %v", err)
	}
	if err := containerlog.Read(ctx, path, provider.ContainerLogOpts{Tail: maxTerminationMessageLogLines}, ring, nil); err != nil {
		return fmt.Sprintf("Error on reading termination message from logs: %v", err)
	}
	return string(ring.Slice())
}
