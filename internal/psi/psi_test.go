package psi

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// The kernel's format, both lines: every value read, total in the file's microseconds.
func TestParseBothLines(t *testing.T) {
	p, err := Parse([]byte("some avg10=1.50 avg60=0.25 avg300=0.01 total=123456\nfull avg10=0.75 avg60=0.10 avg300=0.00 total=6543\n"))
	require.NoError(t, err)
	assert.Equal(t, Data{Avg10: 1.5, Avg60: 0.25, Avg300: 0.01, TotalMicroseconds: 123456}, p.Some)
	require.NotNil(t, p.Full)
	assert.Equal(t, Data{Avg10: 0.75, Avg60: 0.10, TotalMicroseconds: 6543}, *p.Full)
}

// cpu.pressure before Linux 5.13 has no "full" line: Full is nil, and the Summary's Full all
// zeros, as the kubelet reports it; after 5.13 /proc/pressure/cpu's full line is zeros, read
// as such.
func TestParseCPUWithoutOrWithZeroFull(t *testing.T) {
	p, err := Parse([]byte("some avg10=0.00 avg60=0.00 avg300=0.00 total=42\n"))
	require.NoError(t, err)
	assert.Nil(t, p.Full)
	assert.Equal(t, &statsv1alpha1.PSIStats{Some: statsv1alpha1.PSIData{Total: 42}}, p.Stats())

	p, err = Parse([]byte("some avg10=0.00 avg60=0.00 avg300=0.00 total=42\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"))
	require.NoError(t, err)
	require.NotNil(t, p.Full)
	assert.Equal(t, Data{}, *p.Full)
}

// What a later kernel may add is skipped: blank lines, another kind of line, another key; the
// order of the lines and of the keys does not matter; no trailing newline is needed.
func TestParseSkipsWhatItDoesNotKnow(t *testing.T) {
	p, err := Parse([]byte("\nfull total=7 avg300=0.03 avg60=0.02 avg10=0.01\nstall avg10=9 x\n\tsome avg10=1 avg60=2 avg300=3 total=4 avg1=5"))
	require.NoError(t, err)
	assert.Equal(t, Data{Avg10: 1, Avg60: 2, Avg300: 3, TotalMicroseconds: 4}, p.Some)
	assert.Equal(t, &Data{Avg10: 0.01, Avg60: 0.02, Avg300: 0.03, TotalMicroseconds: 7}, p.Full)
}

// Malformed content is an error that says what is wrong — never a panic, never made-up
// values.
func TestParseRefusesMalformedContent(t *testing.T) {
	for content, want := range map[string]string{
		"":                                                         `no "some" line`,
		"\n\n  \n":                                                 `no "some" line`,
		"full avg10=0 avg60=0 avg300=0 total=0":                    `no "some" line`,
		"some":                                                     "line 1 (some): no avg10",
		"some avg10=0 avg60=0 avg300=0":                            "line 1 (some): no total",
		"some avg10=0 avg60=0 total=0":                             "line 1 (some): no avg300",
		"some avg10 avg60=0 avg300=0 total=0":                      `line 1 (some): field "avg10" is not key=value`,
		"some avg10=x avg60=0 avg300=0 total=0":                    `line 1 (some): avg10 "x" is not a percentage`,
		"some avg10=NaN avg60=0 avg300=0 total=0":                  `avg10 "NaN" is not a percentage`,
		"some avg10=0 avg60=+Inf avg300=0 total=0":                 `avg60 "+Inf" is not a percentage`,
		"some avg10=0 avg60=0 avg300=-1 total=0":                   `avg300 "-1" is not a percentage`,
		"some avg10=0 avg60=0 avg300=0 total=-1":                   `total "-1" is not a whole number of microseconds`,
		"some avg10=0 avg60=0 avg300=0 total=1.5":                  `total "1.5" is not a whole number`,
		"some avg10=0 avg60=0 avg300=0 total=99999999999999999999": `total "99999999999999999999" is not a whole number`,
		"some avg10=0 avg10=1 avg60=0 avg300=0 total=0":            "line 1 (some): avg10 twice",
		"some avg10=0 avg60=0 avg300=0 total=0\nsome avg10=0 avg60=0 avg300=0 total=0":                                        `line 2: a second "some" line`,
		"some avg10=0 avg60=0 avg300=0 total=0\nfull avg10=0 avg60=0 avg300=0 total=0\nfull avg10=0 avg60=0 avg300=0 total=0": `line 3: a second "full" line`,
		"some avg10=0 avg60=0 avg300=0 total=0\nfull avg10=0 avg60=0 total=0":                                                 "line 2 (full): no avg300",
		"\x00\xff some": `no "some" line`,
	} {
		t.Run(strings.ReplaceAll(content, "\n", `\n`), func(t *testing.T) {
			p, err := Parse([]byte(content))
			assert.Nil(t, p)
			if assert.Error(t, err) {
				assert.Contains(t, err.Error(), want)
			}
		})
	}
}

// Fuzzed content never panics, and what parses converts to something the Summary's JSON can
// carry (no NaN or infinity, which encoding/json refuses).
func FuzzParse(f *testing.F) {
	f.Add([]byte("some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"))
	f.Add([]byte("some avg10=1e308 avg60=0 avg300=0 total=18446744073709551615"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(data)
		if err != nil {
			return
		}
		_, err = json.Marshal(p.Stats())
		require.NoError(t, err)
	})
}

// The conversion is the kubelet's: Total is the file's microseconds, unchanged (cAdvisor's
// value, which the kubelet reports, though the API documents nanoseconds); a nil Pressure is
// no PSI.
func TestStatsIsTheKubeletsConversion(t *testing.T) {
	p := &Pressure{Some: Data{Avg10: 1, Avg60: 2, Avg300: 3, TotalMicroseconds: 1_000_000}, Full: &Data{Avg10: 0.5, TotalMicroseconds: 250}}
	assert.Equal(t, &statsv1alpha1.PSIStats{
		Some: statsv1alpha1.PSIData{Total: 1_000_000, Avg10: 1, Avg60: 2, Avg300: 3},
		Full: statsv1alpha1.PSIData{Total: 250, Avg10: 0.5},
	}, p.Stats())
	var none *Pressure
	assert.Nil(t, none.Stats())
	data, err := json.Marshal(p.Stats())
	require.NoError(t, err)
	assert.JSONEq(t, `{"some":{"total":1000000,"avg10":1,"avg60":2,"avg300":3},"full":{"total":250,"avg10":0.5,"avg60":0,"avg300":0}}`, string(data))
}

// ReadAll reads the three files of a directory; one that is missing is no PSI for that
// resource, one that is malformed an error naming it, and the others are read all the same.
func TestReadAll(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
	}
	write("cpu.pressure", "some avg10=0.10 avg60=0.00 avg300=0.00 total=11\n")
	write("memory.pressure", "some avg10=0.00 avg60=0.00 avg300=0.00 total=22\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=2\n")
	r, err := ReadAll(dir, ".pressure")
	require.NoError(t, err, "a missing io.pressure is no PSI, not an error")
	assert.Equal(t, &statsv1alpha1.PSIStats{Some: statsv1alpha1.PSIData{Total: 11, Avg10: 0.1}}, r.CPU)
	assert.Equal(t, &statsv1alpha1.PSIStats{Some: statsv1alpha1.PSIData{Total: 22}, Full: statsv1alpha1.PSIData{Total: 2}}, r.Memory)
	assert.Nil(t, r.IO)

	write("io.pressure", "some avg10=zero\n")
	r, err = ReadAll(dir, ".pressure")
	require.Error(t, err)
	assert.Contains(t, err.Error(), filepath.Join(dir, "io.pressure")+`: line 1 (some): avg10 "zero" is not a percentage`)
	assert.NotNil(t, r.CPU)
	assert.NotNil(t, r.Memory)
	assert.Nil(t, r.IO)

	r, err = ReadAll(filepath.Join(dir, "gone"), ".pressure")
	require.NoError(t, err)
	assert.Equal(t, Resources{}, r, "no files: no PSI (cgroup v1, a kernel without PSI)")

	// A directory where a file should be cannot be read: an error, not a crash.
	require.NoError(t, os.Mkdir(filepath.Join(dir, "cpu"), 0o755))
	_, err = ReadAll(dir, "")
	require.Error(t, err)
}

// The machine's own files, where this kernel has them, parse.
func TestReadsThisMachinesPressure(t *testing.T) {
	if _, err := os.Stat("/proc/pressure/cpu"); err != nil {
		t.Skip("this kernel has no /proc/pressure (before 4.20, or without CONFIG_PSI)")
	}
	r, err := ReadAll("/proc/pressure", "")
	require.NoError(t, err)
	if r.CPU == nil {
		t.Skip("PSI is off on this kernel (psi=0)")
	}
	assert.NotNil(t, r.Memory)
	assert.NotNil(t, r.IO)
}
