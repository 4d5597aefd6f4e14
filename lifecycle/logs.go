package lifecycle

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

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

// logLink is the link to the log of instance id of container in the pod name of namespace.
func (p *Provider) logLink(name, namespace, container, id string) string {
	link := name + "_" + namespace + "_" + container + "-" + id
	if len(link) > maxLogLinkName-len(".log") {
		link = link[:maxLogLinkName-len(".log")]
	}
	return filepath.Join(p.cfg.containerLogsDir(), link+".log")
}

// linkContainerLog links the log of the instance id of container to logPath. A link that
// cannot be made is logged: the container runs all the same, as the kubelet's does.
func (p *Provider) linkContainerLog(ctx context.Context, pod *corev1.Pod, container, id, logPath string) {
	link := p.logLink(pod.Name, pod.Namespace, container, id)
	err := os.MkdirAll(filepath.Dir(link), 0o755)
	if err == nil {
		err = os.Symlink(logPath, link)
	}
	if err != nil && !errors.Is(err, fs.ErrExist) {
		klog.FromContext(ctx).Error(err, "Linking the container's log", "link", link)
	}
}

// removeContainer removes the container instance inst (NotFound counts as removed), then the
// link to its log, named from the labels the instance was created with.
func (p *Provider) removeContainer(ctx context.Context, inst *ContainerStatus) error {
	if err := p.rt.RemoveContainer(ctx, inst.ID); err != nil && !provider.IsNotFound(err) {
		return err
	}
	link := p.logLink(inst.Labels[LabelPodName], inst.Labels[LabelPodNamespace], inst.Labels[LabelContainerName], inst.ID)
	if err := os.Remove(link); err != nil && !errors.Is(err, fs.ErrNotExist) {
		klog.FromContext(ctx).Error(err, "Removing the link to a removed container's log", "link", link)
	}
	return nil
}
