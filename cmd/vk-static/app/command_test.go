package app

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"

	"github.com/vk-static/vk-static/internal/memlimit"
)

// parse runs the same flag and config-file handling as run, without starting the agent.
func parse(t *testing.T, args ...string) (*options, error) {
	t.Helper()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o := defaultOptions()
	o.addFlags(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if o.Config != "" {
		if err := applyConfigFile(o.Config, o, fs); err != nil {
			return nil, err
		}
	}
	return o, o.validate()
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestConfigFileAndFlags(t *testing.T) {
	cfg := writeFile(t, "kubelet.yaml", `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
staticPodPath: /etc/kubernetes/manifests
staticPodURL: https://example.com/pods
staticPodURLHeader:
  Authorization: ["Bearer x"]
fileCheckFrequency: 5s
syncFrequency: 30s
maxPods: 50
kubeAPIQPS: 20
registerWithTaints:
- {key: dedicated, value: edge, effect: NoSchedule}
cgroupDriver: cgroupfs
`)
	o, err := parse(t, "--config", cfg, "--max-pods", "70")
	if err != nil {
		t.Fatal(err)
	}
	if o.PodManifestPath != "/etc/kubernetes/manifests" || o.ManifestURL != "https://example.com/pods" {
		t.Errorf("paths not applied: %+v", o)
	}
	if o.MaxPods != 70 {
		t.Errorf("the flag must win over the file: maxPods %d", o.MaxPods)
	}
	if o.FileCheckFrequency != 5*time.Second || o.KubeAPIQPS != 20 || o.SyncFrequency != 30*time.Second {
		t.Errorf("fileCheckFrequency %s kubeAPIQPS %v syncFrequency %s", o.FileCheckFrequency, o.KubeAPIQPS, o.SyncFrequency)
	}
	if h, _ := o.manifestHeader(); h.Get("Authorization") != "Bearer x" {
		t.Errorf("header %v", h)
	}
	if taints, _ := o.taints(); len(taints) != 1 || taints[0].Key != "dedicated" || taints[0].Value != "edge" {
		t.Errorf("taints %+v", taints)
	}
}

// The report frequency defaults as the kubelet's does: 5 minutes, unless a config file sets
// only the update frequency (written before the report frequency existed): then that.
func TestNodeStatusReportFrequencyDefaults(t *testing.T) {
	const header = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
	for _, tc := range []struct {
		name, config string
		args         []string
		want         time.Duration
	}{
		{name: "default", want: 5 * time.Minute},
		{name: "update frequency flag", args: []string{"--node-status-update-frequency", "20s"}, want: 5 * time.Minute},
		{name: "update frequency field", config: "nodeStatusUpdateFrequency: 20s\n", want: 20 * time.Second},
		{name: "both fields", config: "nodeStatusUpdateFrequency: 20s\nnodeStatusReportFrequency: 1m\n", want: time.Minute},
		{name: "flag wins", config: "nodeStatusUpdateFrequency: 20s\n", args: []string{"--node-status-report-frequency", "2m"}, want: 2 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if tc.config != "" {
				args = append(args, "--config", writeFile(t, "c.yaml", header+tc.config))
			}
			o, err := parse(t, args...)
			if err != nil {
				t.Fatal(err)
			}
			assert.Equal(t, tc.want, o.NodeStatusReportFrequency)
		})
	}
}

func TestBadConfigIsAnErrorNamingTheField(t *testing.T) {
	for _, tc := range []struct{ name, content, want string }{
		{"unknown field", "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nstaticPodPth: /x\n", "staticPodPth"},
		{"wrong type", "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: many\n", "maxPods"},
		{"wrong kind", "apiVersion: v1\nkind: Pod\n", "KubeletConfiguration"},
		{"invalid value", "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: -3\n", "--max-pods"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse(t, "--config", writeFile(t, "c.yaml", tc.content))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one naming %q", err, tc.want)
			}
		})
	}
}

func TestInvalidFlagsNameTheFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--node-ip", "not-an-ip"}, "--node-ip"},
		{[]string{"--manifest-url", "ftp://x"}, "--manifest-url"},
		{[]string{"--manifest-url-header", "novalue"}, "--manifest-url-header"},
		{[]string{"--register-with-taints", "k=v:Sometimes"}, "--register-with-taints"},
		{[]string{"--node-labels", "bad key=v"}, "--node-labels"},
		{[]string{"--provider", "docker"}, "--provider"},
		{[]string{"--system-reserved", "gpu=1"}, "--system-reserved"},
		{[]string{"--container-log-max-files", "1"}, "--container-log-max-files"},
		{[]string{"--process-allowed-host-paths", "srv"}, "--process-allowed-host-paths"},
		{[]string{"--process-allowed-uids", "1000-"}, "--process-allowed-uids"},
		{[]string{"--process-allowed-gids", "0-999"}, "--process-allowed-gids: \"0-999\": 0 is root, which only --process-allow-root allows"},
		{[]string{"--hostname-override", "Not_A_Name"}, "--hostname-override"},
		{[]string{"--pod-sync-workers", "0"}, "--pod-sync-workers"},
		{[]string{"--node-status-report-frequency", "0s"}, "--node-status-report-frequency"},
		{[]string{"--node-status-max-images", "-2"}, "--node-status-max-images"},
		{[]string{"--memory-limit", "lots"}, "--memory-limit"},
		{[]string{"--memory-limit", "-5Mi"}, "--memory-limit"},
		{[]string{"--cgroup-driver", "systemd"}, "--cgroup-driver: systemd is not supported by --provider process: use cgroupfs"},
	} {
		_, err := parse(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one naming %s", tc.args, err, tc.want)
		}
	}
	if _, err := parse(t); err != nil {
		t.Errorf("defaults are invalid: %v", err)
	}
	// A CRI runtime makes its own cgroups with its own driver: a kubelet's configuration that
	// names systemd is taken as it is.
	if _, err := parse(t, "--provider", "cri", "--cgroup-driver", "systemd"); err != nil {
		t.Errorf("--provider cri --cgroup-driver systemd: %v", err)
	}
}

func TestMemoryLimit(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		limit int64
		auto  bool
	}{
		{nil, memlimit.Budget(110), true},
		{[]string{"--max-pods", "1000"}, memlimit.Budget(1000), true},
		{[]string{"--memory-limit", "256Mi"}, 256 << 20, false},
		{[]string{"--memory-limit", "none"}, 0, false},
		{[]string{"--memory-limit", "0"}, 0, false},
	} {
		o, err := parse(t, tc.args...)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		limit, auto, err := o.memoryLimit()
		if err != nil || limit != tc.limit || auto != tc.auto {
			t.Errorf("%v: limit %d, auto %v, err %v; want %d, %v", tc.args, limit, auto, err, tc.limit, tc.auto)
		}
	}
}

func TestValidateSubcommand(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := Run([]string{"validate", "--hostname-override", "n1", "../../../testdata/manifests/good"}, &out, &errOut); code != 0 {
		t.Fatalf("good manifests: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	out.Reset()
	errOut.Reset()
	code := Run([]string{"validate", "--hostname-override", "n1", "../../../testdata/manifests/bad"}, &out, &errOut)
	if code != 1 {
		t.Fatalf("bad manifests: exit %d, want 1", code)
	}
	for _, name := range []string{"configmap-volume.yaml", "garbage.yaml", "invalid-spec.yaml", "no-name.yaml", "secret-env.yaml", "service-account.yaml", "syntax.yaml", "wrong-kind.yaml"} {
		if !strings.Contains(out.String(), name+":") {
			t.Errorf("no line for %s in:\n%s", name, out.String())
		}
	}
	if strings.Contains(out.String(), "must-not-appear") || strings.Contains(out.String(), ".hidden") {
		t.Errorf("ignored files were read:\n%s", out.String())
	}
	if code := Run([]string{"validate"}, &out, &errOut); code != 2 {
		t.Errorf("no arguments: exit %d, want 2", code)
	}
}

// A FIFO beside a good manifest made validate hang in its open until it was killed: it is a
// problem that names it, and the good manifest is checked.
func TestValidateNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "zz.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.yaml"), []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: c, image: i}]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := Run([]string{"validate", "--hostname-override", "n1", dir}, &out, &errOut); code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), fifo+": not a regular file (a named pipe)") {
		t.Errorf("no line for the FIFO in:\n%s", out.String())
	}
	if !strings.Contains(errOut.String(), "1 problem(s); 1 pod(s) valid") {
		t.Errorf("the good manifest was not checked:\n%s", errOut.String())
	}
}

func TestVersion(t *testing.T) {
	var out bytes.Buffer
	if code := Run([]string{"version"}, &out, &out); code != 0 || !strings.HasPrefix(out.String(), "vk-static ") {
		t.Fatalf("exit %d output %q", code, out.String())
	}
}

// A mistyped flag, a bad value, conflicting flags, a bad config file or a stray argument is
// printed, naming what was wrong and pointing at --help, with the usage exit code — for the
// agent and its subcommands — and nothing starts.
func TestBadCommandLinesAreNamed(t *testing.T) {
	unknownField := writeFile(t, "unknown-field.yaml", "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nstaticPodPth: /x\n")
	badFieldValue := writeFile(t, "bad-value.yaml", "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: many\n")
	badHeaderFile := writeHeaderFile(t, "Authorization: Bearer x\nno header here\n")
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"unknown flag", []string{"--nonsense"}, []string{"unknown flag: --nonsense"}},
		{"a newer kubelet's flag", []string{"--cpu-manager-policy=static"}, []string{"unknown flag: --cpu-manager-policy"}},
		{"unknown shorthand", []string{"-x"}, []string{"unknown shorthand flag: 'x'"}},
		{"int", []string{"--port", "abc"}, []string{`invalid argument "abc" for "--port"`}},
		{"int32 overflow", []string{"--max-pods", "99999999999"}, []string{`"--max-pods"`}},
		{"duration", []string{"--file-check-frequency", "soon"}, []string{`invalid argument "soon" for "--file-check-frequency"`}},
		{"bool", []string{"--anonymous-auth=maybe"}, []string{`invalid argument "maybe" for "--anonymous-auth"`}},
		{"float", []string{"--kube-api-qps", "fast"}, []string{`"--kube-api-qps"`}},
		{"key=value", []string{"--node-labels", "novalue"}, []string{`"--node-labels"`}},
		{"missing value", []string{"--hostname-override"}, []string{"flag needs an argument: --hostname-override"}},
		{"invalid value", []string{"--node-ip", "not-an-ip"}, []string{"--node-ip", `"not-an-ip" is not an IP address`}},
		{"invalid id range", []string{"--process-allowed-uids", "1000-"}, []string{"--process-allowed-uids", `"1000-"`}},
		{"conflicting pair", []string{"--tls-cert-file", "/c.pem"}, []string{"--tls-cert-file", "--tls-private-key-file"}},
		{"conflicting with standalone", []string{"--anonymous-auth", "--authorization-mode", "Webhook"}, []string{"--authorization-mode", "without --kubeconfig"}},
		{"unknown config-file field", []string{"--config", unknownField}, []string{"--config", `unknown field "staticPodPth"`}},
		{"config-file field of a wrong type", []string{"--config", badFieldValue}, []string{"--config", "maxPods"}},
		{"missing config file", []string{"--config", "/does/not/exist.yaml"}, []string{"--config", "/does/not/exist.yaml"}},
		{"missing header file", []string{"--manifest-url-header-file", "/does/not/exist"}, []string{"--manifest-url-header-file", "/does/not/exist"}},
		{"malformed header file", []string{"--manifest-url-header-file", badHeaderFile}, []string{"--manifest-url-header-file", badHeaderFile + " line 2"}},
		{"stray argument", []string{"stray"}, []string{`unexpected argument "stray"`}},
		{"mistyped subcommand", []string{"valdate", "x.yaml"}, []string{`unexpected argument "valdate"`, "subcommands: validate, pods, logs, version"}},
		{"validate: unknown flag", []string{"validate", "--nonsense", "x.yaml"}, []string{"vk-static validate", "unknown flag: --nonsense"}},
		{"validate: nothing to check", []string{"validate"}, []string{"vk-static validate", "no FILE or DIR"}},
		{"version: unknown flag", []string{"version", "--short"}, []string{"vk-static version", "unknown flag: --short"}},
		{"version: stray argument", []string{"version", "now"}, []string{"vk-static version", `unexpected argument "now"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := Run(tc.args, &out, &errOut)
			assert.Equal(t, 2, code, "exit code; stderr %q", errOut.String())
			for _, want := range tc.want {
				assert.Contains(t, errOut.String(), want)
			}
			assert.Contains(t, errOut.String(), "--help'", "a pointer to --help")
			assert.Empty(t, out.String(), "nothing on stdout")
		})
	}
}
