package probe

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// resolvePort turns an action's port into a number as the kubelet does: an int as is; a name
// from the container's ports, or — the kubelet's last resort — a number written as a string.
func resolvePort(port intstr.IntOrString, ports []corev1.ContainerPort) (int, error) {
	n := -1
	switch port.Type {
	case intstr.Int:
		n = port.IntValue()
	case intstr.String:
		found := false
		for _, p := range ports {
			if p.Name == port.StrVal {
				n, found = int(p.ContainerPort), true
				break
			}
		}
		if !found {
			var err error
			if n, err = strconv.Atoi(port.StrVal); err != nil {
				return -1, fmt.Errorf("port %s not found", port.StrVal)
			}
		}
	default:
		return -1, fmt.Errorf("intOrString had no kind: %+v", port)
	}
	if n <= 0 || n >= 65536 {
		return n, fmt.Errorf("invalid port number: %v", n)
	}
	return n, nil
}
