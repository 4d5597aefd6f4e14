package app

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var updateCLIDoc = flag.Bool("update-cli-doc", false, "rewrite docs/cli.md from the flag definitions")

const cliDoc = "../../../docs/cli.md"

// docs/cli.md is generated from the flag definitions; this fails when it is stale.
func TestCLIDocIsCurrent(t *testing.T) {
	var buf bytes.Buffer
	writeCLIDoc(&buf)
	if *updateCLIDoc {
		require.NoError(t, os.WriteFile(cliDoc, buf.Bytes(), 0o644))
		return
	}
	current, err := os.ReadFile(cliDoc)
	require.NoError(t, err)
	if !bytes.Equal(current, buf.Bytes()) {
		t.Fatalf("%s is stale: run `go generate ./cmd/vk-static/app` and commit it", filepath.Clean(cliDoc))
	}
}

// --help groups the flags by area, in order, names the config fields, and gives the exit codes;
// it is printed on stdout with exit code 0.
func TestHelp(t *testing.T) {
	var out, errOut bytes.Buffer
	require.Equal(t, 0, Run([]string{"--help"}, &out, &errOut))
	help := out.String()
	assert.Empty(t, errOut.String())
	last := -1
	for _, section := range []string{"General", "Sources", "Node and registration", "API server client", "Kubelet API and TLS", "Provider", "Resources", "Logging"} {
		i := strings.Index(help, "\n"+section+" flags:\n")
		require.Greater(t, i, last, "section %q, in order", section)
		last = i
	}
	assert.Contains(t, help, "[KubeletConfiguration: staticPodPath]")
	assert.Contains(t, help, "Exit codes:\n  0  done")
	for _, line := range strings.Split(help, "\n") {
		assert.Equal(t, strings.TrimRight(line, " "), line, "no trailing blanks")
	}

	for _, sub := range []string{"validate", "version"} {
		out.Reset()
		require.Equal(t, 0, Run([]string{sub, "--help"}, &out, &errOut), sub)
		assert.Contains(t, out.String(), "Exit codes:", sub)
	}
}

// Every flag is in one section; the sections hold nothing else.
func TestEveryFlagHasASection(t *testing.T) {
	fss := defaultOptions().flagSections()
	assert.Equal(t, sectionOrder, fss.Order)
	for _, name := range fss.Order {
		assert.True(t, fss.FlagSets[name].HasFlags(), "section %q is empty", name)
	}
	for flag, section := range movedFlags {
		assert.NotNil(t, fss.FlagSets[section].Lookup(flag), "--%s moved to %q", flag, section)
	}
}

// The KubeletConfiguration field each flag's help names is the one --config reads into that
// flag, and every field --config reads is named at a flag.
func TestKubeletConfigFieldsAreTheOnesApplied(t *testing.T) {
	samples := map[string]string{
		"staticPodPath":             "staticPodPath: /m",
		"cgroupRoot":                "cgroupRoot: /x",
		"cgroupsPerQOS":             "cgroupsPerQOS: false",
		"cgroupDriver":              "cgroupDriver: systemd",
		"podPidsLimit":              "podPidsLimit: 100",
		"singleProcessOOMKill":      "singleProcessOOMKill: true",
		"staticPodURL":              "staticPodURL: http://x/m",
		"staticPodURLHeader":        "staticPodURLHeader: {A: [b]}",
		"fileCheckFrequency":        "fileCheckFrequency: 3s",
		"httpCheckFrequency":        "httpCheckFrequency: 3s",
		"syncFrequency":             "syncFrequency: 3s",
		"address":                   "address: 10.0.0.1",
		"port":                      "port: 1234",
		"healthzBindAddress":        "healthzBindAddress: 10.0.0.1",
		"healthzPort":               "healthzPort: 1234",
		"enableProfilingHandler":    "enableProfilingHandler: true",
		"kubeAPIQPS":                "kubeAPIQPS: 3",
		"kubeAPIBurst":              "kubeAPIBurst: 3",
		"eventRecordQPS":            "eventRecordQPS: 3",
		"eventBurst":                "eventBurst: 3",
		"maxPods":                   "maxPods: 3",
		"nodeStatusUpdateFrequency": "nodeStatusUpdateFrequency: 3s",
		"nodeStatusReportFrequency": "nodeStatusReportFrequency: 3s",
		"nodeLeaseDurationSeconds":  "nodeLeaseDurationSeconds: 3",
		"registerWithTaints":        "registerWithTaints: [{key: k, effect: NoSchedule}]",
		"systemReserved":            "systemReserved: {cpu: 100m}",
		"kubeReserved":              "kubeReserved: {cpu: 100m}",
		"containerLogMaxSize":       "containerLogMaxSize: 1Mi",
		"containerLogMaxFiles":      "containerLogMaxFiles: 3",
		"tlsCertFile":               "tlsCertFile: /c",
		"tlsPrivateKeyFile":         "tlsPrivateKeyFile: /k",
		"tlsMinVersion":             "tlsMinVersion: VersionTLS13",
		"tlsCipherSuites":           "tlsCipherSuites: [TLS_AES_128_GCM_SHA256]",

		"authentication.x509.clientCAFile":           "authentication: {x509: {clientCAFile: /ca}}",
		"authentication.anonymous.enabled":           "authentication: {anonymous: {enabled: true}}",
		"authentication.webhook.enabled":             "authentication: {webhook: {enabled: false}}",
		"authentication.webhook.cacheTTL":            "authentication: {webhook: {cacheTTL: 3s}}",
		"authorization.mode":                         "authorization: {mode: AlwaysAllow}",
		"authorization.webhook.cacheAuthorizedTTL":   "authorization: {webhook: {cacheAuthorizedTTL: 3s}}",
		"authorization.webhook.cacheUnauthorizedTTL": "authorization: {webhook: {cacheUnauthorizedTTL: 3s}}",
		"streamingConnectionIdleTimeout":             "streamingConnectionIdleTimeout: 3s",
		"containerRuntimeEndpoint":                   "containerRuntimeEndpoint: unix:///c.sock",
		"imageServiceEndpoint":                       "imageServiceEndpoint: unix:///i.sock",
		"imageGCHighThresholdPercent":                "imageGCHighThresholdPercent: 90",
		"imageGCLowThresholdPercent":                 "imageGCLowThresholdPercent: 70",
		"imageMinimumGCAge":                          "imageMinimumGCAge: 5m",
		"clusterDomain":                              "clusterDomain: cluster.local",
		"podLogsDir":                                 "podLogsDir: /run/pod-logs",
		"clusterDNS":                                 "clusterDNS: [10.96.0.10]",
		"resolvConf":                                 "resolvConf: /run/resolv.conf",
		"allowedUnsafeSysctls":                       "allowedUnsafeSysctls: [kernel.msg*]",
		"evictionHard":                               "evictionHard: {memory.available: 1Gi}",
		"evictionSoft":                               "evictionSoft: {memory.available: 2Gi}",
		"evictionSoftGracePeriod":                    "evictionSoftGracePeriod: {memory.available: 1m}",
		"evictionMinimumReclaim":                     "evictionMinimumReclaim: {memory.available: 100Mi}",
		"evictionPressureTransitionPeriod":           "evictionPressureTransitionPeriod: 1m",
		"evictionMaxPodGracePeriod":                  "evictionMaxPodGracePeriod: 30",
		"nodeStatusMaxImages":                        "nodeStatusMaxImages: 3",
	}
	named := map[string]bool{}
	for flagName, field := range kubeletConfigFields {
		named[strings.Split(field, ".")[0]] = true
		t.Run(flagName, func(t *testing.T) {
			sample, ok := samples[field]
			require.True(t, ok, "no sample value for %s", field)
			o := defaultOptions()
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			o.addFlags(fs)
			f := fs.Lookup(flagName)
			require.NotNil(t, f, "no flag --%s", flagName)
			before := f.Value.String()
			cfg := writeFile(t, "c.yaml", "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"+sample+"\n")
			require.NoError(t, applyConfigFile(cfg, o, fs))
			assert.NotEqual(t, before, f.Value.String(), "%s does not set --%s", field, flagName)
			assert.Contains(t, f.Usage, "[KubeletConfiguration: "+field+"]")
		})
	}
	// Fields the kubelet reads from its configuration file only, with no flag (TestShutdownConfig).
	configOnly := map[string]bool{"shutdownGracePeriod": true, "shutdownGracePeriodCriticalPods": true, "shutdownGracePeriodByPodPriority": true}
	for field := range supportedConfigFields {
		if field != "apiVersion" && field != "kind" && !configOnly[field] {
			assert.True(t, named[field], "--config reads %s, but no flag's help names it", field)
		}
	}
}
