package kubeletclient

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/vk-static/vk-static/podstatus"
	"github.com/vk-static/vk-static/podutil"
)

// podRow is one line of `vk-static pods`: kubectl get pods' columns, the pod named with its
// namespace (an agent's pods span namespaces), and where it came from.
type podRow struct {
	Name, Ready, Status, Restarts, Age, Source string
}

// writePodTable prints rows as kubectl does: upper-case headers, columns three spaces apart.
func writePodTable(w io.Writer, rows []podRow) error {
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	fmt.Fprintln(tw, "NAME\tREADY\tSTATUS\tRESTARTS\tAGE\tSOURCE")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, r.Ready, r.Status, r.Restarts, r.Age, r.Source)
	}
	return tw.Flush()
}

// podSource is where pod came from: its manifest file, the manifest URL (manifestURL, when
// known), or api for a pod the API server bound here.
func podSource(pod *corev1.Pod, manifestURL string) string {
	switch pod.Annotations[podutil.ConfigSourceAnnotationKey] {
	case podutil.FileSource:
		if f := pod.Annotations[podutil.ConfigFileAnnotationKey]; f != "" {
			return f
		}
		return podutil.FileSource
	case podutil.HTTPSource:
		if manifestURL != "" {
			return manifestURL
		}
		return podutil.HTTPSource
	case "", podutil.APIServerSource:
		return podutil.APIServerSource
	default:
		return pod.Annotations[podutil.ConfigSourceAnnotationKey]
	}
}

// podAge is how long ago pod was created, as kubectl prints it. A static pod that has no
// mirror has no creation time: the time the agent first saw it stands in.
func podAge(pod *corev1.Pod, now time.Time) string {
	created := pod.CreationTimestamp.Time
	if created.IsZero() {
		if seen, err := time.Parse(time.RFC3339Nano, pod.Annotations[podutil.ConfigFirstSeenAnnotationKey]); err == nil {
			created = seen
		}
	}
	if created.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(created))
}

// podTableRow is pod's row: READY, STATUS and RESTARTS computed as kubectl's printPod
// (k8s.io/kubernetes pkg/printers/internalversion, v1.36) computes them.
func podTableRow(pod *corev1.Pod, now time.Time, manifestURL string) podRow {
	ready, status, restarts := podStatusColumns(pod, now)
	return podRow{
		Name:     pod.Namespace + "/" + pod.Name,
		Ready:    ready,
		Status:   status,
		Restarts: restarts,
		Age:      podAge(pod, now),
		Source:   podSource(pod, manifestURL),
	}
}

// podStatusColumns are kubectl's READY, STATUS and RESTARTS of pod.
func podStatusColumns(pod *corev1.Pod, now time.Time) (ready, reason, restarts string) {
	restartCount := 0
	restartableInitRestarts := 0
	total := len(pod.Spec.Containers)
	readyCount := 0
	var lastRestart, lastRestartableInitRestart time.Time

	reason = string(pod.Status.Phase)
	if pod.Status.Reason != "" {
		reason = pod.Status.Reason
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonSchedulingGated {
			reason = corev1.PodReasonSchedulingGated
		}
	}

	initContainers := make(map[string]*corev1.Container, len(pod.Spec.InitContainers))
	for i := range pod.Spec.InitContainers {
		initContainers[pod.Spec.InitContainers[i].Name] = &pod.Spec.InitContainers[i]
		if podutil.IsSidecar(&pod.Spec.InitContainers[i]) {
			total++
		}
	}

	initializing := false
	for i, c := range pod.Status.InitContainerStatuses {
		restartCount += int(c.RestartCount)
		if t := c.LastTerminationState.Terminated; t != nil && lastRestart.Before(t.FinishedAt.Time) {
			lastRestart = t.FinishedAt.Time
		}
		restartable := podutil.IsSidecar(initContainers[c.Name])
		if restartable {
			restartableInitRestarts += int(c.RestartCount)
			if t := c.LastTerminationState.Terminated; t != nil && lastRestartableInitRestart.Before(t.FinishedAt.Time) {
				lastRestartableInitRestart = t.FinishedAt.Time
			}
		}
		switch {
		case c.State.Terminated != nil && c.State.Terminated.ExitCode == 0:
			continue
		case restartable && c.Started != nil && *c.Started:
			if c.Ready {
				readyCount++
			}
			continue
		case c.State.Terminated != nil:
			switch t := c.State.Terminated; {
			case t.Reason != "":
				reason = "Init:" + t.Reason
			case t.Signal != 0:
				reason = fmt.Sprintf("Init:Signal:%d", t.Signal)
			default:
				reason = fmt.Sprintf("Init:ExitCode:%d", t.ExitCode)
			}
			initializing = true
		case c.State.Waiting != nil && c.State.Waiting.Reason != "" && c.State.Waiting.Reason != "PodInitializing":
			reason = "Init:" + c.State.Waiting.Reason
			initializing = true
		default:
			reason = fmt.Sprintf("Init:%d/%d", i, len(pod.Spec.InitContainers))
			initializing = true
		}
		break
	}

	if !initializing || hasCondition(pod, corev1.PodInitialized) {
		restartCount = restartableInitRestarts
		lastRestart = lastRestartableInitRestart
		hasRunning := false
		errorReason := ""
		for i := len(pod.Status.ContainerStatuses) - 1; i >= 0; i-- {
			c := pod.Status.ContainerStatuses[i]
			restartCount += int(c.RestartCount)
			if t := c.LastTerminationState.Terminated; t != nil && lastRestart.Before(t.FinishedAt.Time) {
				lastRestart = t.FinishedAt.Time
			}
			switch {
			case c.State.Waiting != nil && c.State.Waiting.Reason != "":
				reason = c.State.Waiting.Reason
			case c.State.Terminated != nil:
				switch t := c.State.Terminated; {
				case t.Reason != "":
					reason = t.Reason
				case t.Signal != 0:
					reason = fmt.Sprintf("Signal:%d", t.Signal)
				default:
					reason = fmt.Sprintf("ExitCode:%d", t.ExitCode)
				}
				if c.State.Terminated.ExitCode != 0 {
					errorReason = reason
				}
			case c.Ready && c.State.Running != nil:
				hasRunning = true
				readyCount++
			}
		}
		// Back to Running when a container still runs.
		if reason == "Completed" {
			switch {
			case hasRunning && hasCondition(pod, corev1.PodReady):
				reason = "Running"
			case errorReason != "":
				reason = errorReason
			case hasRunning:
				reason = "NotReady"
			}
		}
	}

	terminal := podstatus.IsTerminal(&pod.Status)
	switch {
	case pod.DeletionTimestamp != nil && pod.Status.Reason == "NodeLost": // the node lifecycle controller's reason
		reason = "Unknown"
	case pod.DeletionTimestamp != nil && !terminal:
		reason = "Terminating"
	}

	restarts = strconv.Itoa(restartCount)
	if restartCount != 0 && !lastRestart.IsZero() {
		restarts = fmt.Sprintf("%d (%s ago)", restartCount, duration.HumanDuration(now.Sub(lastRestart)))
	}
	return fmt.Sprintf("%d/%d", readyCount, total), reason, restarts
}

// hasCondition reports whether pod's condition t is True.
func hasCondition(pod *corev1.Pod, t corev1.PodConditionType) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
