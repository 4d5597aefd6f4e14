package podwait

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// MainStatus is the status of container main in p, nil when p reports none.
func MainStatus(p *corev1.Pod) *corev1.ContainerStatus {
	for i := range p.Status.ContainerStatuses {
		if p.Status.ContainerStatuses[i].Name == "main" {
			return &p.Status.ContainerStatuses[i]
		}
	}
	return nil
}

// MainRunning is a check for Until: not being deleted, phase Running, main running.
func MainRunning(p *corev1.Pod) error {
	if p.DeletionTimestamp != nil {
		return fmt.Errorf("being deleted")
	}
	cs := MainStatus(p)
	if p.Status.Phase != corev1.PodRunning || cs == nil || cs.State.Running == nil {
		return fmt.Errorf("phase %q, main %s", p.Status.Phase, Describe(cs))
	}
	return nil
}

// Describe is v as JSON, for a failure message; "null" for a nil status.
func Describe(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}

// Running is a check for Until: phase Running, whatever its containers report.
func Running(p *corev1.Pod) error {
	if p.Status.Phase != corev1.PodRunning {
		return fmt.Errorf("phase %q", p.Status.Phase)
	}
	return nil
}
