package app

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
	cliflag "k8s.io/component-base/cli/flag"

	"github.com/vk-static/vk-static/cmd/vk-static/internal/cli"
)

// The sections --help and docs/cli.md group the agent's flags in, in order.
const (
	sectionGeneral    = "general"
	sectionSources    = "sources"
	sectionNode       = "node and registration"
	sectionClient     = "API server client"
	sectionKubeletAPI = "kubelet API and TLS"
	sectionProvider   = "provider"
	sectionResources  = "resources"
	sectionLogging    = "logging"
)

var sectionOrder = []string{
	sectionGeneral, sectionSources, sectionNode, sectionClient, sectionKubeletAPI,
	sectionProvider, sectionResources, sectionLogging,
}

// movedFlags are flags registered with a section's others (the provider's) that a reader looks
// for in another section.
var movedFlags = map[string]string{
	"system-reserved": sectionResources,
	"kube-reserved":   sectionResources,
}

// kubeletConfigFields names, by flag, the KubeletConfiguration field --config reads into it
// (applyConfigFile); TestKubeletConfigFieldsAreTheOnesApplied keeps the two in step. Flags that
// are not here have no field (as with the kubelet: --kubeconfig, --hostname-override,
// --node-ip, --node-labels, --root-dir, --config) or are vk-static's own.
var kubeletConfigFields = map[string]string{
	"cgroup-root":                  "cgroupRoot",
	"cgroups-per-qos":              "cgroupsPerQOS",
	"cgroup-driver":                "cgroupDriver",
	"pod-pids-limit":               "podPidsLimit",
	"single-process-oom-kill":      "singleProcessOOMKill",
	"pod-manifest-path":            "staticPodPath",
	"manifest-url":                 "staticPodURL",
	"manifest-url-header":          "staticPodURLHeader",
	"file-check-frequency":         "fileCheckFrequency",
	"http-check-frequency":         "httpCheckFrequency",
	"sync-frequency":               "syncFrequency",
	"pod-logs-dir":                 "podLogsDir",
	"address":                      "address",
	"port":                         "port",
	"healthz-bind-address":         "healthzBindAddress",
	"healthz-port":                 "healthzPort",
	"profiling":                    "enableProfilingHandler",
	"kube-api-qps":                 "kubeAPIQPS",
	"kube-api-burst":               "kubeAPIBurst",
	"event-qps":                    "eventRecordQPS",
	"event-burst":                  "eventBurst",
	"max-pods":                     "maxPods",
	"node-status-update-frequency": "nodeStatusUpdateFrequency",
	"node-status-report-frequency": "nodeStatusReportFrequency",
	"node-lease-duration-seconds":  "nodeLeaseDurationSeconds",
	"node-status-max-images":       "nodeStatusMaxImages",
	"register-with-taints":         "registerWithTaints",
	"system-reserved":              "systemReserved",
	"kube-reserved":                "kubeReserved",
	"container-log-max-size":       "containerLogMaxSize",
	"container-log-max-files":      "containerLogMaxFiles",

	"tls-cert-file":        "tlsCertFile",
	"tls-private-key-file": "tlsPrivateKeyFile",
	"tls-min-version":      "tlsMinVersion",
	"tls-cipher-suites":    "tlsCipherSuites",
	"client-ca-file":       "authentication.x509.clientCAFile",
	"anonymous-auth":       "authentication.anonymous.enabled",

	"authentication-token-webhook":                 "authentication.webhook.enabled",
	"authentication-token-webhook-cache-ttl":       "authentication.webhook.cacheTTL",
	"authorization-mode":                           "authorization.mode",
	"authorization-webhook-cache-authorized-ttl":   "authorization.webhook.cacheAuthorizedTTL",
	"authorization-webhook-cache-unauthorized-ttl": "authorization.webhook.cacheUnauthorizedTTL",
	"streaming-connection-idle-timeout":            "streamingConnectionIdleTimeout",
	"container-runtime-endpoint":                   "containerRuntimeEndpoint",
	"image-service-endpoint":                       "imageServiceEndpoint",
	"image-gc-high-threshold":                      "imageGCHighThresholdPercent",
	"image-gc-low-threshold":                       "imageGCLowThresholdPercent",
	"minimum-image-ttl-duration":                   "imageMinimumGCAge",
	"cluster-domain":                               "clusterDomain",
	"cluster-dns":                                  "clusterDNS",
	"resolv-conf":                                  "resolvConf",
	"allowed-unsafe-sysctls":                       "allowedUnsafeSysctls",
	"eviction-hard":                                "evictionHard",
	"eviction-soft":                                "evictionSoft",
	"eviction-soft-grace-period":                   "evictionSoftGracePeriod",
	"eviction-minimum-reclaim":                     "evictionMinimumReclaim",
	"eviction-pressure-transition-period":          "evictionPressureTransitionPeriod",
	"eviction-max-pod-grace-period":                "evictionMaxPodGracePeriod",
}

// flagSections are the agent's flags, bound to o, in the sections --help prints them in; each
// flag's help names the KubeletConfiguration field it matches, where there is one.
func (o *options) flagSections() cliflag.NamedFlagSets {
	var fss cliflag.NamedFlagSets
	for _, name := range sectionOrder {
		fss.FlagSet(name) // fixes the order
	}
	add := func(section string, define func(*pflag.FlagSet)) {
		defined := pflag.NewFlagSet(section, pflag.ContinueOnError)
		define(defined)
		defined.VisitAll(func(f *pflag.Flag) {
			if field := kubeletConfigFields[f.Name]; field != "" {
				f.Usage += " [KubeletConfiguration: " + field + "]"
			}
			s := section
			if moved, ok := movedFlags[f.Name]; ok {
				s = moved
			}
			fss.FlagSet(s).AddFlag(f)
		})
	}
	add(sectionGeneral, o.addGeneralFlags)
	add(sectionSources, o.addSourceFlags)
	add(sectionNode, o.addNodeFlags)
	add(sectionNode, o.addDNSFlags)
	add(sectionNode, o.addNodeHealthFlags)
	add(sectionClient, o.addClientFlags)
	add(sectionKubeletAPI, o.addServingFlags)
	add(sectionProvider, o.addProviderFlags)
	add(sectionProvider, o.addSysctlFlags)
	add(sectionResources, o.addResourceFlags)
	fss.FlagSet(sectionLogging).AddGoFlagSet(klogFlagSet())
	return fss
}

// agentFlagSet is the agent's command line, bound to o: errors are returned unprinted (run
// prints them, see cli.UsageError) and --help prints the grouped flags on stdout.
func (o *options) agentFlagSet(stdout, stderr io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet("vk-static", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fss := o.flagSections()
	for _, name := range fss.Order {
		fs.AddFlagSet(fss.FlagSets[name])
	}
	fs.Usage = func() { printAgentUsage(stdout, fss) }
	return fs
}

const agentUsage = `vk-static is a node agent: it runs static pods from a manifest directory and a manifest
URL, and the pods the API server schedules to its node, on a provider, with mirror pods so
that the cluster sees them all. Its flags are the kubelet's where the kubelet has one.

Usage:
  vk-static [flags]                                          run the agent
  vk-static validate [--hostname-override NAME] FILE|DIR...  check manifests as the agent would
  vk-static pods [--root-dir DIR]                            list a running agent's pods
  vk-static logs POD [-c CONTAINER] [-f] [--root-dir DIR]    print a container's log
  vk-static version                                          print the version
`

// exitCodes is the exit code table of every command.
const exitCodes = `Exit codes:
  0  done: the agent stopped on SIGINT or SIGTERM; validate found every manifest good; --help
  1  runtime failure: the agent failed (its log says why); validate found a problem; pods or
     logs could not reach the agent, or it refused
  2  usage: an unknown flag or subcommand, a bad value, conflicting flags, a --config file
     that cannot be read or has an unknown field
`

func printAgentUsage(w io.Writer, fss cliflag.NamedFlagSets) {
	fmt.Fprint(w, agentUsage)
	printSections(w, fss)
	fmt.Fprint(w, "\n"+exitCodes)
}

// printSections prints each section's flags under its title, wrapped at cli.HelpColumns. Unlike
// cliflag.PrintSections, which aligns every section on the widest flag of all (here a long
// --authorization-webhook-... name would push every description onto a line of its own),
// each section is aligned on its own flags.
func printSections(w io.Writer, fss cliflag.NamedFlagSets) {
	for _, name := range fss.Order {
		fs := fss.FlagSets[name]
		if !fs.HasFlags() {
			continue
		}
		fmt.Fprintf(w, "\n%s flags:\n", strings.ToUpper(name[:1])+name[1:])
		for _, line := range strings.Split(strings.TrimRight(fs.FlagUsagesWrapped(cli.HelpColumns), "\n"), "\n") {
			fmt.Fprintln(w, strings.TrimRight(line, " "))
		}
	}
}
