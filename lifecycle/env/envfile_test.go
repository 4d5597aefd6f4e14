package env

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

func TestParseEnvFile(t *testing.T) {
	tests := []struct {
		name, file, key string
		want            string
		wantErr         string
	}{
		{"simple", "A='1'\nB='2'\n", "B", "2", ""},
		{"no trailing newline", "A='1'", "A", "1", ""},
		{"literal content", `A='$(B) "x" \n $$'`, "A", `$(B) "x" \n $$`, ""},
		{"equals in value", "A='a=b'", "A", "a=b", ""},
		{"leading blanks, blank lines, comments", "\n  \t\n# A='no'\n  A='yes'\n", "A", "yes", ""},
		{"comment after the value", "A='v'   # note\n", "A", "v", ""},
		{"multi-line value", "A='line1\n  line2\nline3'\nB='b'", "A", "line1\n  line2\nline3", ""},
		{"key after a multi-line value", "A='x\ny'\nB='b'", "B", "b", ""},
		{"first definition wins", "A='1'\nA='2'\n", "A", "1", ""},
		{"lines after the key are not read", "A='1'\nthis is garbage\n", "A", "1", ""},
		{"blank after = is empty", "A= 'x'\n", "A", "", ""},
		{"blank after = on another key skips that line", "B= garbage\nA='a'", "A", "a", ""},
		{"empty quotes", "A=''", "A", "", ""},
		{"absent key", "A='1'\n", "B", "", ""},
		{"empty file", "", "A", "", ""},
		{"missing =", "A\n", "A", "", "line 1: missing '='"},
		{"empty name", "='x'\n", "A", "", "line 1: empty variable name"},
		{"blank before =", "A ='x'\n", "A", "", "line 1: whitespace before '=' is not allowed"},
		{"unquoted", "B='b'\nA=x\n", "A", "", "line 2: value must be enclosed in single quotes"},
		{"double quoted", `A="x"`, "A", "", "line 1: value must be enclosed in single quotes"},
		{"content after the quote", "A='x' y\n", "A", "", "line 1: unexpected content after closing quote"},
		{"content after a multi-line quote", "A='x\ny'z\n", "A", "", "line 2: unexpected content after closing quote"},
		{"unclosed quote", "B='b'\nA='x\ny\n", "A", "", "line 2: unclosed single quote"},
		{"error before the key", "B=x\nA='a'\n", "A", "", "line 1: value must be enclosed in single quotes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseEnvFile(strings.NewReader(tt.file), tt.key)
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestFileValueStaysInVolume(t *testing.T) {
	root := t.TempDir()
	vol := filepath.Join(root, "vol")
	require.NoError(t, os.MkdirAll(filepath.Join(vol, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(vol, "sub", "app.env"), []byte("K='inside'\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "outside.env"), []byte("K='outside'\n"), 0o644))
	require.NoError(t, os.Symlink(filepath.Join(root, "outside.env"), filepath.Join(vol, "escape.env")))

	got, err := fileValue(vol, "sub/app.env", "K")
	require.NoError(t, err)
	assert.Equal(t, "inside", got)

	for _, path := range []string{"../outside.env", "escape.env", "/etc/hostname"} {
		_, err := fileValue(vol, path, "K")
		assert.Error(t, err, path)
	}
	_, err = fileValue(vol, "missing.env", "K")
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestBuildFileKeyRef(t *testing.T) {
	vol := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(vol, "app.env"), []byte("TOKEN='t0k'\nEMPTY=''\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(vol, "bad.env"), []byte("TOKEN=t0k\n"), 0o644))
	facts := buildFacts()
	facts.VolumeDirs = map[string]string{"work": vol}
	fileKey := func(name, volume, path, key string, optional bool) corev1.EnvVar {
		return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FileKeyRef: &corev1.FileKeySelector{
			VolumeName: volume, Path: path, Key: key, Optional: optionalPtr(optional)}}}
	}

	c := &corev1.Container{Name: "app", Env: []corev1.EnvVar{
		val("OPT", "before"),
		fileKey("TOKEN", "work", "app.env", "TOKEN", false),
		fileKey("OPT", "work", "app.env", "NOPE", true),
		fileKey("OPT", "work", "app.env", "EMPTY", true),
		val("USE", "$(TOKEN)"),
	}}
	res, err := Build(context.Background(), buildPod(), c, facts, nil)
	require.NoError(t, err)
	assert.Equal(t, []EnvVar{{"OPT", "before"}, {"TOKEN", "t0k"}, {"USE", "t0k"}}, res.Env)

	tests := []struct {
		name    string
		ev      corev1.EnvVar
		wantMsg string
		wantErr error
	}{
		{"required key missing", fileKey("X", "work", "app.env", "NOPE", false),
			`container "app": env "X": env file "app.env" of volume "work" has no key "NOPE"`, ErrKeyNotFound},
		{"empty counts as missing", fileKey("X", "work", "app.env", "EMPTY", false),
			`container "app": env "X": env file "app.env" of volume "work" has no key "EMPTY"`, ErrKeyNotFound},
		{"unknown volume", fileKey("X", "other", "app.env", "TOKEN", true),
			`container "app": env "X": fileKeyRef: no volume "other" in PodFacts.VolumeDirs`, nil},
		{"missing file, even optional", fileKey("X", "work", "gone.env", "TOKEN", true), "", os.ErrNotExist},
		{"bad file, even optional", fileKey("X", "work", "bad.env", "TOKEN", true),
			`container "app": env "X": env file "bad.env" of volume "work": line 1: value must be enclosed in single quotes`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &corev1.Container{Name: "app", Env: []corev1.EnvVar{tt.ev}}
			_, err := Build(context.Background(), buildPod(), c, facts, nil)
			require.Error(t, err)
			if tt.wantMsg != "" {
				assert.Equal(t, tt.wantMsg, err.Error())
			}
			if tt.wantErr != nil {
				assert.ErrorIs(t, err, tt.wantErr)
			}
		})
	}
}
