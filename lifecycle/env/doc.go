// Package env computes a container's environment and command line exactly as the kubelet
// does (kubelet_pods.go makeEnvironmentVariables, kubecontainer.ExpandContainerCommandAndArgs,
// pkg/fieldpath and pkg/api/v1/resource of Kubernetes v1.36), so that any lifecycle backend —
// host processes today, CRI later — starts a container with the same variables and argv the
// kubelet would hand to its runtime.
//
// The pieces:
//
//   - FieldValue resolves a downward API fieldRef (metadata.*, spec.nodeName,
//     spec.serviceAccountName, status.hostIP(s), status.podIP(s)) against a pod and the
//     PodFacts the pod object does not hold yet when a container starts.
//   - ResourceValue resolves a resourceFieldRef with its divisor, rounding up like the kubelet,
//     an unset limit standing for the node's allocatable.
//   - Build returns the container's environment: envFrom sources in order, then env in order,
//     a later definition of a name overriding an earlier one, $(VAR) in env values expanded
//     against what precedes them; valueFrom read from the downward API, config maps and
//     secrets (through an ObjectGetter) and env files in volumes (fileKeyRef, PodFacts.VolumeDirs).
//     Keys of an envFrom source that cannot be variable names come back in Result.SkippedKeys
//     for an Event.
//   - Command returns the command and the args with $(VAR) expanded against that environment.
//   - Expand is the kubelet's $(VAR) expansion itself, for a caller with its own lookup
//     (a volume mount's subPathExpr).
//   - ServiceEnv gives the service environment variables the kubelet injects
//     (KUBERNETES_SERVICE_HOST, FOO_SERVICE_PORT, ... from the Services of the pod's namespace
//     when pod.spec.enableServiceLinks, and of the master service "kubernetes" in "default"
//     always), which Build adds from PodFacts.ServiceEnv; nodeobjects.ServiceWatch holds the cluster's
//     Services for it, from a watch with the node's identity.
//
// Errors from Build are what the kubelet reports with reason CreateContainerConfigError; their
// text names the container, the variable and the object, fit for an Event and the container's
// Waiting message.
//
// Smallest use:
//
//	facts := env.PodFacts{HostIPs: nodeIPs, PodIPs: podIPs, Allocatable: node.Status.Allocatable}
//	res, err := env.Build(ctx, pod, &pod.Spec.Containers[0], facts, nodeobjects.NewClientGetter(client))
//	if err != nil { /* CreateContainerConfigError: err.Error() */ }
//	command, args := env.Command(&pod.Spec.Containers[0], res.Env)
//	cmd := exec.CommandContext(ctx, command[0], append(command[1:], args...)...)
//	cmd.Env = res.Strings()
package env
