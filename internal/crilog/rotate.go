package crilog

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// rotatedTimeFormat is the suffix of a rotated file's name, the kubelet's container log
// manager's: the log at path is rotated to path.20060102-150405 (UTC here), with ".N" added when
// that name is taken, so that the names order the files oldest first.
const rotatedTimeFormat = "20060102-150405"

// LogFile is one file of a log: the current one or a rotated one.
type LogFile struct {
	Name string
	Info os.FileInfo
	// stamp and counter order rotated files (oldest first); the current file has neither.
	stamp   string
	counter int
}

// Files returns the files of the log at path, oldest first: its rotated files, then path itself
// if it exists. A log that has no file at all is an empty list, not an error.
func Files(path string) ([]string, error) {
	files, err := ListFiles(path)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f.Name
	}
	return names, nil
}

// ListFiles is Files with each file's FileInfo (its identity, for os.SameFile).
//
// The current file is looked at before the directory is read, so that a rotation while listing
// leaves no gap: a file renamed away meanwhile is found under its rotated name (and listed
// there, once), and only files newer than every listed one can be missing — the next listing
// finds them. Without that order, the file rotated away between the two looks would be seen
// under neither name, and a reader would skip it. A file removed while listed is left out.
func ListFiles(path string) ([]LogFile, error) {
	current, err := os.Stat(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("container log: %w", err)
	}
	rotated, err := RotatedFiles(path)
	if err != nil {
		return nil, err
	}
	files := make([]LogFile, 0, len(rotated)+1)
	for _, f := range rotated {
		info, err := os.Stat(f.Name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("container log: %w", err)
		}
		f.Info = info
		files = append(files, f)
		if current != nil && os.SameFile(current, info) {
			current = nil
		}
	}
	if current != nil {
		files = append(files, LogFile{Name: path, Info: current})
	}
	return files, nil
}

// RotatedFiles returns the names of the rotated files of the log at path, oldest first, without
// looking at the files themselves.
func RotatedFiles(path string) ([]LogFile, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("container log: %w", err)
	}
	var rotated []LogFile
	for _, e := range entries {
		suffix, ok := strings.CutPrefix(e.Name(), base+".")
		if !ok {
			continue
		}
		stamp, counter, ok := parseRotatedSuffix(suffix)
		if !ok {
			continue
		}
		rotated = append(rotated, LogFile{Name: filepath.Join(dir, e.Name()), stamp: stamp, counter: counter})
	}
	slices.SortFunc(rotated, compareRotated)
	return rotated, nil
}

// parseRotatedSuffix reads what follows "path." in a rotated file's name: a timestamp and an
// optional counter. Anything else (the kubelet's ".gz", a temporary file) is not ours.
func parseRotatedSuffix(suffix string) (stamp string, counter int, ok bool) {
	stamp, count, hasCounter := strings.Cut(suffix, ".")
	if _, err := time.Parse(rotatedTimeFormat, stamp); err != nil || len(stamp) != len(rotatedTimeFormat) {
		return "", 0, false
	}
	if !hasCounter {
		return stamp, 0, true
	}
	n, err := strconv.Atoi(count)
	if err != nil || n < 1 || strconv.Itoa(n) != count {
		return "", 0, false
	}
	return stamp, n, true
}

func compareRotated(a, b LogFile) int {
	return cmp.Or(strings.Compare(a.stamp, b.stamp), cmp.Compare(a.counter, b.counter))
}

// NextRotatedName returns the name the current file of the log at path is rotated to at now: one
// that orders after every rotated file already there, even if the clock went back or several
// rotations happen within a second.
func NextRotatedName(path string, rotated []LogFile, now time.Time) string {
	stamp, counter := now.UTC().Format(rotatedTimeFormat), 0
	if len(rotated) > 0 {
		newest := rotated[len(rotated)-1]
		if newest.stamp >= stamp {
			stamp, counter = newest.stamp, newest.counter+1
		}
	}
	if counter == 0 {
		return path + "." + stamp
	}
	return path + "." + stamp + "." + strconv.Itoa(counter)
}

// RemoveExcess removes the oldest of rotated (oldest first) so that at most keep remain.
func RemoveExcess(rotated []LogFile, keep int) error {
	var errs []error
	for len(rotated) > keep {
		if err := os.Remove(rotated[0].Name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("container log: removing a rotated file: %w", err))
		}
		rotated = rotated[1:]
	}
	return errors.Join(errs...)
}
