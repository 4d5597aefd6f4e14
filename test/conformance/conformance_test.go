package conformance

import (
	"archive/tar"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// A report as ginkgo v2 writes it: specs the focus left out are "skipped" with no reason and
// are not counted; a spec's own Skip is; suite nodes count only when they fail.
const junitReport = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="6" disabled="2" errors="0" failures="2" time="10">
  <testsuite name="Kubernetes e2e suite" tests="6" disabled="0" skipped="2" errors="0" failures="2" time="10">
    <testcase name="[SynchronizedBeforeSuite]" classname="Kubernetes e2e suite" status="passed" time="1"></testcase>
    <testcase name="[It] [sig-node] Downward API should provide pod name [NodeConformance] [Conformance]" classname="Kubernetes e2e suite" status="passed" time="4.5"></testcase>
    <testcase name="[It] [sig-node] Pods should get a host IP [NodeConformance]" classname="Kubernetes e2e suite" status="failed" time="300">
      <failure message="" type="failed">[FAILED] Timed out after 300s.&#xA;pod never ran</failure>
    </testcase>
    <testcase name="[It] [sig-apps] Deployment should work" classname="Kubernetes e2e suite" status="skipped" time="0"><skipped message="skipped"></skipped></testcase>
    <testcase name="[It] [sig-node] PrivilegedPod should work [NodeConformance]" classname="Kubernetes e2e suite" status="skipped" time="0.1"><skipped message="skipped - no dummy link type"></skipped></testcase>
    <testcase name="[ReportAfterSuite] Kubernetes e2e suite report" classname="Kubernetes e2e suite" status="failed" time="0"><failure message="boom" type="failed"></failure></testcase>
  </testsuite>
</testsuites>`

func TestReadJUnit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "junit_01.xml")
	require.NoError(t, os.WriteFile(path, []byte(junitReport), 0o644))
	specs, err := readJUnit(path)
	require.NoError(t, err)
	assert.Equal(t, []Spec{
		{Name: "[ReportAfterSuite] Kubernetes e2e suite report", State: StateFailed, Reason: "boom"},
		{Name: "[sig-node] Downward API should provide pod name [NodeConformance] [Conformance]", State: StatePassed, Seconds: 4.5},
		{Name: "[sig-node] Pods should get a host IP [NodeConformance]", State: StateFailed, Seconds: 300, Reason: "[FAILED] Timed out after 300s."},
		{Name: "[sig-node] PrivilegedPod should work [NodeConformance]", State: StateSkipped, Seconds: 0.1, Reason: "no dummy link type"},
	}, specs)
	assert.Equal(t, Counts{Passed: 1, Failed: 2, Skipped: 1}, count(specs))
}

func TestVerdict(t *testing.T) {
	r := &Result{Agent: AgentVKStatic, Provider: ProviderCRI, Commit: "abc1234", Seconds: 905,
		Counts: Counts{Passed: 2, Failed: 1}, Specs: make([]Spec, 3)}
	assert.Equal(t, "conformance: vk-static --provider cri (checkout abc1234): 2 passed, 1 failed, 0 skipped of 3 specs in 15m5s", r.Verdict())
	r.Version = "vk-static abc1234-dirty"
	assert.Equal(t, "conformance: vk-static --provider cri (vk-static abc1234-dirty): 2 passed, 1 failed, 0 skipped of 3 specs in 15m5s", r.Verdict())
}

// Every registry of the e2e image manifest goes to the run's registry, the path below it kept;
// the invalid one to a port that refuses at once.
func TestRepoList(t *testing.T) {
	data, err := RepoList("127.0.0.1:5000")
	require.NoError(t, err)
	var m map[string]string
	require.NoError(t, yaml.Unmarshal(data, &m))
	assert.Len(t, m, 9)
	assert.Equal(t, "127.0.0.1:5000/e2e-test-images", m["promoterE2eRegistry"])
	assert.Equal(t, "127.0.0.1:5000", m["gcRegistry"])
	assert.Equal(t, "127.0.0.1:1/invalid", m["invalidRegistry"])
	for k, v := range m {
		assert.True(t, strings.HasPrefix(v, "127.0.0.1:"), k)
	}
}

func TestParseLDD(t *testing.T) {
	out := "\tlinux-vdso.so.1 (0x00007ffd)\n\tlibbsd.so.0 => /lib/x86_64-linux-gnu/libbsd.so.0 (0x00007f4f)\n" +
		"\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f4f)\n\t/lib64/ld-linux-x86-64.so.2 (0x00007f4f)\n"
	assert.Equal(t, []string{"/lib/x86_64-linux-gnu/libbsd.so.0", "/lib/x86_64-linux-gnu/libc.so.6", "/lib64/ld-linux-x86-64.so.2"},
		parseLDD([]byte(out)))
}

// A layer has every parent directory, before its children; links, modes and owners as given;
// a later entry for a path replaces the earlier.
func TestTreeLayer(t *testing.T) {
	tr := tree{}
	tr.file("/usr/local/bin/nnp", 0o4755, []byte("x"))
	tr.link("/bin/sh", "/bin/busybox")
	tr.dir("/tmp", 0o1777)
	tr.file("/etc/passwd", 0o644, []byte("old"))
	tr.file("etc/passwd", 0o644, []byte("new"))
	layer, err := tr.layer()
	require.NoError(t, err)
	img, err := mutate.AppendLayers(empty.Image, layer)
	require.NoError(t, err)

	type seen struct {
		typ  byte
		mode int64
		link string
		data string
	}
	var order []string
	got := map[string]seen{}
	r := tar.NewReader(mutate.Extract(img))
	for {
		h, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		data, err := io.ReadAll(r)
		require.NoError(t, err)
		name := strings.TrimSuffix(h.Name, "/")
		order = append(order, name)
		got[name] = seen{h.Typeflag, h.Mode, h.Linkname, string(data)}
	}
	assert.Equal(t, []string{"bin", "bin/sh", "etc", "etc/passwd", "tmp", "usr", "usr/local", "usr/local/bin", "usr/local/bin/nnp"}, order)
	assert.Equal(t, seen{tar.TypeReg, 0o4755, "", "x"}, got["usr/local/bin/nnp"])
	assert.Equal(t, seen{tar.TypeSymlink, 0o777, "/bin/busybox", ""}, got["bin/sh"])
	assert.Equal(t, seen{tar.TypeDir, 0o1777, "", ""}, got["tmp"])
	assert.Equal(t, seen{tar.TypeDir, 0o755, "", ""}, got["usr/local"])
	assert.Equal(t, "new", got["etc/passwd"].data)
}

func TestValidate(t *testing.T) {
	bin := t.TempDir()
	for _, b := range []string{"e2e.test", "ginkgo", "kube-scheduler", "kubelet", "agnhost", "nonewprivs"} {
		require.NoError(t, os.WriteFile(filepath.Join(bin, b), nil, 0o755))
	}
	o := Options{Agent: AgentKubelet, Provider: ProviderCRI, BinDir: bin}
	require.NoError(t, o.validate())
	assert.Equal(t, "", o.Provider, "the kubelet has no provider")
	assert.Equal(t, DefaultFocus, o.Focus)
	assert.Equal(t, 8, o.Procs)

	o = Options{Agent: AgentVKStatic, Provider: ProviderProcess, BinDir: bin}
	require.NoError(t, o.validate())
	assert.Equal(t, ProcessFocus, o.Focus, "the process provider's subset")
	assert.Equal(t, "NodeConformance", o.LabelFilter)
	o = Options{Agent: AgentVKStatic, Provider: ProviderProcess, Focus: "Downward API", BinDir: bin}
	require.NoError(t, o.validate())
	assert.Equal(t, "Downward API", o.Focus, "a focus given is kept")
	assert.Equal(t, "", o.LabelFilter)

	o = Options{Agent: AgentVKStatic, Provider: "mock", BinDir: bin}
	assert.ErrorContains(t, o.validate(), "provider")
	o = Options{Agent: "kubelite", BinDir: bin}
	assert.ErrorContains(t, o.validate(), "agent")
	o = Options{Agent: AgentVKStatic, Provider: ProviderProcess, BinDir: t.TempDir()}
	assert.ErrorContains(t, o.validate(), "make conformance-bin")
}

func TestCompare(t *testing.T) {
	a := &Result{Agent: AgentKubelet, Version: "Kubernetes v1.36.3", Seconds: 60, Counts: Counts{Passed: 2}, Specs: []Spec{
		{Name: "s1", State: StatePassed}, {Name: "s2", State: StatePassed},
	}}
	b := &Result{Agent: AgentVKStatic, Provider: ProviderCRI, Version: "vk-static abc", Seconds: 90, Counts: Counts{Passed: 1, Failed: 1}, Specs: []Spec{
		{Name: "s1", State: StatePassed}, {Name: "s2", State: StateFailed, Reason: "a|b"}, {Name: "s3", State: StatePassed},
	}}
	out := Compare(a, b)
	assert.Contains(t, out, "| | kubelet | vk-static (cri) |")
	assert.Contains(t, out, "| passed | 2 | 1 |")
	assert.Contains(t, out, "| suite wall time | 1m0s | 1m30s |")
	assert.Contains(t, out, "2 specs differ:")
	assert.Contains(t, out, `| s2 | passed | failed: a\|b |`)
	assert.Contains(t, out, "| s3 | — | passed |")
	assert.NotContains(t, out, "| s1 |")
}
