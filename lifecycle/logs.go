package lifecycle

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/provider"
)

// Where containers log: the kubelet's layout, which log shippers (fluent-bit, promtail, vector)
// read. Each instance of a container logs to
// <Config.PodLogsDir>/<namespace>_<name>_<uid>/<container>/<attempt>.log, and while the
// instance exists a link to that file is in the containers directory beside PodLogsDir
// (/var/log/containers beside /var/log/pods), named <pod>_<namespace>_<container>-<container
// ID>.log, as the kubelet's kuberuntime makes and removes it.

// maxLogLinkName is the longest file name the kubelet gives a link (ext4's 255), the ".log"
// suffix included.
const maxLogLinkName = 255

// podLogDir holds the logs of pod's containers (the sandbox's log directory).
func (p *Provider) podLogDir(pod *corev1.Pod) string {
	return filepath.Join(p.cfg.PodLogsDir, pod.Namespace+"_"+pod.Name+"_"+string(pod.UID))
}

// logPath is where instance attempt of container logs.
func (p *Provider) logPath(pod *corev1.Pod, container string, attempt uint32) string {
	return filepath.Join(p.podLogDir(pod), container, strconv.FormatUint(uint64(attempt), 10)+".log")
}

// logLink is the link to the log of the container instance id.
func (p *Provider) logLink(pod *corev1.Pod, container, id string) string {
	name := pod.Name + "_" + pod.Namespace + "_" + container + "-" + id
	if len(name) > maxLogLinkName-len(".log") {
		name = name[:maxLogLinkName-len(".log")]
	}
	return filepath.Join(p.cfg.containerLogsDir(), name+".log")
}

// linkContainerLog links the log of the instance id of container to logPath. A link that
// cannot be made is logged: the container runs all the same, as the kubelet's does.
func (p *Provider) linkContainerLog(ctx context.Context, pod *corev1.Pod, container, id, logPath string) {
	link := p.logLink(pod, container, id)
	err := os.MkdirAll(filepath.Dir(link), 0o755)
	if err == nil {
		err = os.Symlink(logPath, link)
	}
	if err != nil && !errors.Is(err, fs.ErrExist) {
		klog.FromContext(ctx).Error(err, "Linking the container's log", "link", link)
	}
}

// removeContainer removes the container instance id (NotFound counts as removed), then the
// link to its log.
func (p *Provider) removeContainer(ctx context.Context, id string) error {
	if err := p.rt.RemoveContainer(ctx, id); err != nil && !provider.IsNotFound(err) {
		return err
	}
	// The link's name ends with the instance's ID, which no other instance has.
	dir := p.cfg.containerLogsDir()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil // no links at all
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), "-"+id+".log") {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				klog.FromContext(ctx).Error(err, "Removing the link to a removed container's log", "link", e.Name())
			}
		}
	}
	return nil
}
