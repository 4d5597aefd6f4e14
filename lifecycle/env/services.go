package env

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vk-static/vk-static/nodeobjects"
)

// Services is where a pod's service environment variables come from: the cluster's Services,
// as the kubelet's service informer holds them (nodeobjects.ServiceWatch, with the node's
// identity).
type Services interface {
	// List returns every Service the node knows of, in all namespaces.
	List() ([]*corev1.Service, error)
	// HasSynced reports whether the Services have been read at least once.
	HasSynced() bool
}

var _ Services = (*nodeobjects.ServiceWatch)(nil)

// masterServices are the services of the default namespace every pod gets variables for,
// whatever its enableServiceLinks (the kubelet's masterServices).
var masterServices = map[string]bool{"kubernetes": true}

// ServiceEnv is the kubelet's getServiceEnvVarMap: the variables of the Services of namespace
// (when enableServiceLinks) and of the master service "kubernetes" in "default" (always),
// FromServices' names to values; Services without a cluster IP (headless) give none.
func ServiceEnv(services []*corev1.Service, namespace string, enableServiceLinks bool) map[string]string {
	out := map[string]string{}
	for _, e := range FromServices(PodServices(services, namespace, enableServiceLinks)) {
		out[e.Name] = e.Value
	}
	return out
}

// PodServices are the Services among services whose variables a pod of namespace gets
// (ServiceEnv): those of namespace when enableServiceLinks, and the master service
// "kubernetes" in "default", each with a cluster IP; a Service of namespace hides a master
// service of the same name. In no particular order.
func PodServices(services []*corev1.Service, namespace string, enableServiceLinks bool) []*corev1.Service {
	byName := map[string]*corev1.Service{}
	for _, s := range services {
		if !serviceIPSet(s) {
			continue
		}
		if s.Namespace == metav1.NamespaceDefault && masterServices[s.Name] {
			if _, ok := byName[s.Name]; !ok {
				byName[s.Name] = s
			}
		} else if s.Namespace == namespace && enableServiceLinks {
			byName[s.Name] = s
		}
	}
	picked := make([]*corev1.Service, 0, len(byName))
	for _, s := range byName {
		picked = append(picked, s)
	}
	return picked
}

func serviceIPSet(s *corev1.Service) bool {
	return s.Spec.ClusterIP != corev1.ClusterIPNone && s.Spec.ClusterIP != ""
}

// FromServices is the kubelet's envvars.FromServices: for each Service with a cluster IP,
// <NAME>_SERVICE_HOST, <NAME>_SERVICE_PORT (its first port), <NAME>_SERVICE_PORT_<PORT NAME>
// for each named port, and the Docker link variables <NAME>_PORT, <NAME>_PORT_<port>_<PROTO>
// and its _PROTO, _PORT and _ADDR; names upper-cased with "-" as "_".
func FromServices(services []*corev1.Service) []EnvVar {
	var out []EnvVar
	for _, s := range services {
		if !serviceIPSet(s) || len(s.Spec.Ports) == 0 {
			continue
		}
		prefix := envVarName(s.Name)
		ip := s.Spec.ClusterIP
		out = append(out, EnvVar{Name: prefix + "_SERVICE_HOST", Value: ip},
			EnvVar{Name: prefix + "_SERVICE_PORT", Value: strconv.Itoa(int(s.Spec.Ports[0].Port))})
		for _, sp := range s.Spec.Ports {
			if sp.Name != "" {
				out = append(out, EnvVar{Name: prefix + "_SERVICE_PORT_" + envVarName(sp.Name), Value: strconv.Itoa(int(sp.Port))})
			}
		}
		for i, sp := range s.Spec.Ports {
			protocol := string(corev1.ProtocolTCP)
			if sp.Protocol != "" {
				protocol = string(sp.Protocol)
			}
			url := fmt.Sprintf("%s://%s", strings.ToLower(protocol), net.JoinHostPort(ip, strconv.Itoa(int(sp.Port))))
			if i == 0 {
				out = append(out, EnvVar{Name: prefix + "_PORT", Value: url})
			}
			portPrefix := fmt.Sprintf("%s_PORT_%d_%s", prefix, sp.Port, strings.ToUpper(protocol))
			out = append(out,
				EnvVar{Name: portPrefix, Value: url},
				EnvVar{Name: portPrefix + "_PROTO", Value: strings.ToLower(protocol)},
				EnvVar{Name: portPrefix + "_PORT", Value: strconv.Itoa(int(sp.Port))},
				EnvVar{Name: portPrefix + "_ADDR", Value: ip})
		}
	}
	return out
}

func envVarName(s string) string { return strings.ToUpper(strings.ReplaceAll(s, "-", "_")) }
