package kubeletclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/cmd/vk-static/internal/cli"
)

// logsUsage is `vk-static logs --help`'s text before the flags.
const logsUsage = `Print the log of a container of a pod a running agent runs, as kubectl logs does. POD is a
name or namespace/name as vk-static pods lists it; the container is the pod's only one (or the
one its kubectl.kubernetes.io/default-container annotation names) unless -c says which.
Reads the agent's kubelet API as the local administrator, with the credential the agent wrote
under --root-dir.

Usage:
  vk-static logs POD [-c CONTAINER] [-f] [--tail N] [--timestamps] [--previous] [--root-dir DIR]

Flags:
`

// defaultContainerAnnotation names the container kubectl logs and exec choose by default.
const defaultContainerAnnotation = "kubectl.kubernetes.io/default-container"

// logsOptions are `vk-static logs`' flags beside the connection's.
type logsOptions struct {
	container  string
	follow     bool
	tail       int64
	timestamps bool
	previous   bool
}

// Logs is `vk-static logs`: args are its arguments and flags, defaultRootDir the agent's
// --root-dir default.
func Logs(ctx context.Context, args []string, stdout, stderr io.Writer, defaultRootDir string) int {
	const name = "vk-static logs"
	var co clientOptions
	var lo logsOptions
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVarP(&lo.container, "container", "c", "", "The container (default: the pod's only one).")
	fs.BoolVarP(&lo.follow, "follow", "f", false, "Go on printing the log as it grows, until the container ends or this command is stopped.")
	fs.Int64Var(&lo.tail, "tail", -1, "Lines from the end of the log to print; -1 all.")
	fs.BoolVar(&lo.timestamps, "timestamps", false, "Begin each line with the time it was written (RFC 3339).")
	fs.BoolVarP(&lo.previous, "previous", "p", false, "The log of the container's previous instance, the one before its last restart.")
	co.addFlags(fs, defaultRootDir)
	fs.Usage = func() { fmt.Fprint(stdout, logsUsage+fs.FlagUsagesWrapped(cli.HelpColumns)+"\n"+clientExitCodes) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		return cli.UsageError(stderr, name, err)
	}
	switch {
	case fs.NArg() == 0:
		return cli.UsageError(stderr, name, errors.New("no POD: name the pod (vk-static pods lists them)"))
	case fs.NArg() > 1:
		return cli.UsageError(stderr, name, fmt.Errorf("unexpected argument %q (one POD only; the container is -c)", fs.Arg(1)))
	case lo.tail < -1:
		return cli.UsageError(stderr, name, fmt.Errorf("--tail: %d is not -1 (all) or a number of lines", lo.tail))
	}
	ref, err := parsePodRef(fs.Arg(0))
	if err != nil {
		return cli.UsageError(stderr, name, err)
	}
	client, pods, err := co.open(ctx)
	if err != nil {
		return exitCode(stderr, name, err)
	}
	defer client.close()
	pod, container, err := chooseContainer(pods, ref, lo.container)
	if err != nil {
		return exitCode(stderr, name, err)
	}
	resp, err := client.get(ctx, "/containerLogs/"+url.PathEscape(pod.Namespace)+"/"+url.PathEscape(pod.Name)+"/"+url.PathEscape(container), lo.query())
	if err != nil {
		return cli.Failure(stderr, name, err)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(stdout, resp.Body); err != nil && ctx.Err() == nil {
		return cli.Failure(stderr, name, fmt.Errorf("reading the log: %w", err))
	}
	return 0
}

// query is the kubelet's /containerLogs query for the options.
func (lo logsOptions) query() url.Values {
	q := url.Values{}
	if lo.follow {
		q.Set("follow", "true")
	}
	if lo.tail >= 0 {
		q.Set("tailLines", strconv.FormatInt(lo.tail, 10))
	}
	if lo.timestamps {
		q.Set("timestamps", "true")
	}
	if lo.previous {
		q.Set("previous", "true")
	}
	return q
}

// podRef is POD as given: a name, with a namespace or not ("" any).
type podRef struct{ namespace, name string }

func (r podRef) String() string {
	if r.namespace == "" {
		return r.name
	}
	return r.namespace + "/" + r.name
}

// parsePodRef reads POD: name or namespace/name.
func parsePodRef(s string) (podRef, error) {
	namespace, name, qualified := strings.Cut(s, "/")
	if !qualified {
		namespace, name = "", s
	}
	if name == "" || (qualified && namespace == "") || strings.Contains(name, "/") {
		return podRef{}, fmt.Errorf("POD %q is not a name or namespace/name", s)
	}
	return podRef{namespace: namespace, name: name}, nil
}

// chooseContainer finds the pod ref names among pods, and its container: container when
// given, else the default one. A name in several namespaces, or a pod with several containers
// and none named, is a usageErr naming the choices; a pod or container that does not exist is
// a plain error naming what does.
func chooseContainer(pods []corev1.Pod, ref podRef, container string) (*corev1.Pod, string, error) {
	var matches []*corev1.Pod
	for i := range pods {
		p := &pods[i]
		if p.Name == ref.name && (ref.namespace == "" || p.Namespace == ref.namespace) {
			matches = append(matches, p)
		}
	}
	if len(matches) == 0 {
		// A static pod is named after its manifest plus the node: "ticker" finds ticker-<node>.
		for i := range pods {
			p := &pods[i]
			if p.Name == ref.name+"-"+strings.ToLower(p.Spec.NodeName) && (ref.namespace == "" || p.Namespace == ref.namespace) {
				matches = append(matches, p)
			}
		}
	}
	switch len(matches) {
	case 0:
		names := make([]string, 0, len(pods))
		for i := range pods {
			names = append(names, pods[i].Namespace+"/"+pods[i].Name)
		}
		if len(names) == 0 {
			return nil, "", fmt.Errorf("pod %q not found: the agent has no pods", ref.String())
		}
		return nil, "", fmt.Errorf("pod %q not found; the agent's pods: %s", ref.String(), strings.Join(names, ", "))
	case 1:
	default:
		names := make([]string, 0, len(matches))
		for _, p := range matches {
			names = append(names, p.Namespace+"/"+p.Name)
		}
		return nil, "", usageErr{fmt.Errorf("pod %q is in several namespaces: %s; name one as namespace/name", ref.String(), strings.Join(names, ", "))}
	}
	pod := matches[0]
	all := containerNames(pod)
	if container != "" {
		if !slices.Contains(all, container) {
			return nil, "", fmt.Errorf("container %q is not in pod %s/%s; its containers: %s", container, pod.Namespace, pod.Name, strings.Join(all, ", "))
		}
		return pod, container, nil
	}
	if d := pod.Annotations[defaultContainerAnnotation]; d != "" && slices.Contains(all, d) {
		return pod, d, nil
	}
	if len(pod.Spec.Containers) == 1 { // init containers aside, as kubectl logs chooses
		return pod, pod.Spec.Containers[0].Name, nil
	}
	return nil, "", usageErr{fmt.Errorf("pod %s/%s has %d containers: %s; choose one with -c", pod.Namespace, pod.Name, len(all), strings.Join(all, ", "))}
}

// containerNames are pod's init, regular and ephemeral containers' names, in that order.
func containerNames(pod *corev1.Pod) []string {
	var names []string
	for _, c := range pod.Spec.InitContainers {
		names = append(names, c.Name)
	}
	for _, c := range pod.Spec.Containers {
		names = append(names, c.Name)
	}
	for _, c := range pod.Spec.EphemeralContainers {
		names = append(names, c.Name)
	}
	return names
}
