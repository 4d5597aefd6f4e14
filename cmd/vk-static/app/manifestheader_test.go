package app

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// writeHeaderFile writes a --manifest-url-header-file, 0600 as it should be.
func writeHeaderFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "headers")
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

// A header file's lines are headers, comments and blank lines skipped, CRLF endings and the
// blanks around names and values trimmed; a name repeated within a file is sent with each
// value. Files and --manifest-url-header (or the config file's staticPodURLHeader) add up.
func TestManifestURLHeaderFile(t *testing.T) {
	tokens := writeHeaderFile(t, "# the manifest server's token\n\nAuthorization: Bearer secret-token\r\n  x-tenant:edge  \nX-Tenant: lab\n")
	trace := writeHeaderFile(t, "X-Trace: 1")
	o, err := parse(t, "--provider", "mock", "--hostname-override", "node-a", "--manifest-url", "https://x/pods",
		"--manifest-url-header-file", tokens, "--manifest-url-header-file", trace, "--manifest-url-header", "Accept:application/yaml")
	require.NoError(t, err)
	cfg, _, err := agentConfig(context.Background(), o, prometheus.NewRegistry())
	require.NoError(t, err)
	assert.Equal(t, http.Header{
		"Authorization": {"Bearer secret-token"},
		"X-Tenant":      {"edge", "lab"},
		"X-Trace":       {"1"},
		"Accept":        {"application/yaml"},
	}, cfg.ManifestURLHeader, "what the manifest URL source sends")

	config := writeFile(t, "c.yaml", "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nstaticPodURLHeader: {Accept: [application/json]}\n")
	o, err = parse(t, "--config", config, "--manifest-url-header-file", trace)
	require.NoError(t, err)
	h, err := o.manifestHeader()
	require.NoError(t, err)
	assert.Equal(t, http.Header{"Accept": {"application/json"}, "X-Trace": {"1"}}, h)
}

// A file that cannot be read, or holds a line that is not a header, or no header at all, is
// refused at start naming the flag, the file and the line — never what the line holds, which
// may be the credential; so is a header name set in two places, naming both.
func TestManifestURLHeaderFileRefused(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "absent")
	noColon := writeHeaderFile(t, "# token\nX-Ok: 1\nBearer secret-token\n")
	badName := writeHeaderFile(t, "Bearer secret-token: x\n")
	control := writeHeaderFile(t, "Authorization: Bearer secret\x00token\n")
	empty := writeHeaderFile(t, "# nothing yet\n\n")
	first := writeHeaderFile(t, "X-Ok: 1\nauthorization: Bearer secret-token\n")
	second := writeHeaderFile(t, "# again\nAuthorization: Bearer secret-token\n")
	staticPodURLHeader := writeFile(t, "c.yaml", "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nstaticPodURLHeader: {Authorization: [Bearer old]}\n")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"missing", []string{"--manifest-url-header-file", missing}, "--manifest-url-header-file: open " + missing + ": no such file or directory"},
		{"a directory", []string{"--manifest-url-header-file", filepath.Dir(missing)}, "--manifest-url-header-file: " + filepath.Dir(missing)},
		{"no colon", []string{"--manifest-url-header-file", noColon}, "--manifest-url-header-file: " + noColon + " line 3: not 'Name: value'"},
		{"not a token", []string{"--manifest-url-header-file", badName}, "--manifest-url-header-file: " + badName + " line 1: the header name is not an HTTP token"},
		{"control character", []string{"--manifest-url-header-file", control}, "--manifest-url-header-file: " + control + " line 1: the value of Authorization holds a control character"},
		{"no header", []string{"--manifest-url-header-file", empty}, "--manifest-url-header-file: " + empty + ": no header in it"},
		{"and --manifest-url-header", []string{"--manifest-url-header-file", first, "--manifest-url-header", "Authorization:Bearer old"},
			"--manifest-url-header-file: " + first + ` line 2: header "Authorization" is also set by --manifest-url-header`},
		{"and staticPodURLHeader", []string{"--manifest-url-header-file", first, "--config", staticPodURLHeader},
			"--manifest-url-header-file: " + first + ` line 2: header "Authorization" is also set by --manifest-url-header`},
		{"two files", []string{"--manifest-url-header-file", first, "--manifest-url-header-file", second},
			"--manifest-url-header-file: " + second + ` line 2: header "Authorization" is also set by ` + first + " line 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse(t, tc.args...)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), "secret")
		})
	}
}

// /configz names the headers of the files, as those of the flag, without their values.
func TestManifestURLHeaderFileRedactedInConfigz(t *testing.T) {
	file := writeHeaderFile(t, "Authorization: Bearer file-secret\nX-Tenant: edge\n")
	o, err := parse(t, "--kubeconfig", "/k", "--manifest-url", "https://x/pods", "--manifest-url-header-file", file,
		"--manifest-url-header", "X-Flag:flag-secret")
	require.NoError(t, err)
	c, why := o.kubeletAPI()
	require.Empty(t, why)
	served, err := json.Marshal(c.Configz)
	require.NoError(t, err)
	for _, secret := range []string{"file-secret", "edge", "flag-secret"} {
		assert.NotContains(t, string(served), secret)
	}
	data, err := yaml.Marshal(o.kubeletConfiguration())
	require.NoError(t, err)
	assert.NotContains(t, string(data), "file-secret")
	assert.Equal(t, map[string][]string{
		"Authorization": {redactedHeaderValue}, "X-Tenant": {redactedHeaderValue}, "X-Flag": {redactedHeaderValue},
	}, o.kubeletConfiguration().StaticPodURLHeader)
}

// A header file other users can read is used, with a warning naming it.
func TestManifestURLHeaderFileReadableByOthersIsAWarning(t *testing.T) {
	private := writeHeaderFile(t, "Authorization: Bearer x\n")
	shared := writeHeaderFile(t, "Authorization: Bearer y\n")
	require.NoError(t, os.Chmod(shared, 0o644))
	warnings := func(path string) string {
		o, err := parse(t, "--manifest-url-header-file", path)
		require.NoError(t, err)
		var buf bytes.Buffer
		o.warnReadableHeaderFiles(funcr.New(func(prefix, args string) { buf.WriteString(prefix + args + "\n") }, funcr.Options{}))
		return buf.String()
	}
	assert.Empty(t, warnings(private))
	got := warnings(shared)
	assert.Contains(t, got, "Warning: --manifest-url-header-file is readable by users other than its owner")
	assert.Contains(t, got, shared)
	assert.Contains(t, got, `"mode"="0644"`)
	assert.False(t, strings.Contains(got, "Bearer"), "never the content")
}
