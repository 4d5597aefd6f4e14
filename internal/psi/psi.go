package psi

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// Data is one line of a pressure file.
type Data struct {
	// Avg10, Avg60 and Avg300 are the percentages of time stalled over the last 10, 60 and
	// 300 seconds.
	Avg10, Avg60, Avg300 float64
	// TotalMicroseconds is the time stalled since the start, in microseconds (total=).
	TotalMicroseconds uint64
}

// Pressure is a pressure file: the "some" line, and the "full" line where there is one (nil
// in cpu.pressure before Linux 5.13).
type Pressure struct {
	Some Data
	Full *Data
}

// Parse reads the content of a pressure file. It refuses, saying why, content without a
// "some" line, a "some" or "full" line twice, a line without one of avg10, avg60, avg300 and
// total (or with one twice), a field that is not key=value, and a value that is not a number
// (a negative, infinite or NaN average included). Blank lines, lines of another kind and
// other keys are skipped: what a later kernel may add.
func Parse(data []byte) (*Pressure, error) {
	var p Pressure
	seenSome := false
	for n, line := range bytes.Split(data, []byte("\n")) {
		fields := bytes.Fields(line)
		if len(fields) == 0 {
			continue
		}
		var d Data
		var err error
		switch kind := string(fields[0]); kind {
		case "some":
			if seenSome {
				return nil, fmt.Errorf("line %d: a second %q line", n+1, kind)
			}
			seenSome = true
			if d, err = parseLine(fields[1:]); err != nil {
				return nil, fmt.Errorf("line %d (%s): %w", n+1, kind, err)
			}
			p.Some = d
		case "full":
			if p.Full != nil {
				return nil, fmt.Errorf("line %d: a second %q line", n+1, kind)
			}
			if d, err = parseLine(fields[1:]); err != nil {
				return nil, fmt.Errorf("line %d (%s): %w", n+1, kind, err)
			}
			p.Full = &d
		}
	}
	if !seenSome {
		return nil, errors.New(`no "some" line`)
	}
	return &p, nil
}

// parseLine reads the key=value fields of a line after its kind.
func parseLine(fields [][]byte) (Data, error) {
	var d Data
	const avg10, avg60, avg300, total = 1, 2, 4, 8
	var seen int
	for _, f := range fields {
		key, value, ok := bytes.Cut(f, []byte("="))
		if !ok {
			return Data{}, fmt.Errorf("field %q is not key=value", f)
		}
		var bit int
		var avg *float64
		switch string(key) {
		case "avg10":
			bit, avg = avg10, &d.Avg10
		case "avg60":
			bit, avg = avg60, &d.Avg60
		case "avg300":
			bit, avg = avg300, &d.Avg300
		case "total":
			bit = total
		default:
			continue
		}
		if seen&bit != 0 {
			return Data{}, fmt.Errorf("%s twice", key)
		}
		seen |= bit
		if avg == nil {
			v, err := strconv.ParseUint(string(value), 10, 64)
			if err != nil {
				return Data{}, fmt.Errorf("total %q is not a whole number of microseconds", value)
			}
			d.TotalMicroseconds = v
			continue
		}
		v, err := strconv.ParseFloat(string(value), 64)
		if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
			return Data{}, fmt.Errorf("%s %q is not a percentage", key, value)
		}
		*avg = v
	}
	for _, k := range []struct {
		bit  int
		name string
	}{{avg10, "avg10"}, {avg60, "avg60"}, {avg300, "avg300"}, {total, "total"}} {
		if seen&k.bit == 0 {
			return Data{}, fmt.Errorf("no %s", k.name)
		}
	}
	return d, nil
}

// Stats is the pressure as the Summary API carries it, as the kubelet fills it: Full all
// zeros where the file has no "full" line, and Total the file's microseconds (see the package
// documentation).
func (p *Pressure) Stats() *statsv1alpha1.PSIStats {
	if p == nil {
		return nil
	}
	s := &statsv1alpha1.PSIStats{Some: p.Some.summary()}
	if p.Full != nil {
		s.Full = p.Full.summary()
	}
	return s
}

func (d Data) summary() statsv1alpha1.PSIData {
	return statsv1alpha1.PSIData{Total: d.TotalMicroseconds, Avg10: d.Avg10, Avg60: d.Avg60, Avg300: d.Avg300}
}

// Read reads the pressure file at path as the Summary API carries it: nil, and no error, when
// the file is not there or the kernel refuses to read it (PSI off); an error naming the file
// when it cannot be read otherwise or is malformed (Parse).
func Read(path string) (*statsv1alpha1.PSIStats, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if absent(err) {
			return nil, nil
		}
		return nil, err
	}
	p, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p.Stats(), nil
}

// absent: no PSI here. ENOENT: a kernel before 4.20 or without CONFIG_PSI, cgroup v1, or
// "0" in cgroup.pressure (Linux 6.1 and later), which hides a cgroup's files; EOPNOTSUPP: a
// kernel that has the files but was booted without PSI (psi=0, or without psi=1 where it is
// off by default).
func absent(err error) bool {
	return errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOTSUP)
}

// Resources are the pressures of the three resources the kubelet reports; nil where there is
// none.
type Resources struct {
	CPU, Memory, IO *statsv1alpha1.PSIStats
}

// ReadAll reads dir's cpu, memory and io pressure files, each name followed by suffix:
// ReadAll("/proc/pressure", "") for the machine, ReadAll(cgroupDir, ".pressure") for a cgroup
// v2 directory. A file that cannot be read leaves its resource nil, with the others read, and
// its error joined to the one returned.
func ReadAll(dir, suffix string) (Resources, error) {
	var r Resources
	var errs []error
	for _, f := range []struct {
		name string
		to   **statsv1alpha1.PSIStats
	}{{"cpu", &r.CPU}, {"memory", &r.Memory}, {"io", &r.IO}} {
		s, err := Read(filepath.Join(dir, f.name+suffix))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		*f.to = s
	}
	return r, errors.Join(errs...)
}
