package volume

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// The kubelet's atomic writer layout (pkg/volume/util/atomic_writer.go): the files live in a
// hidden timestamped directory ..<ts>; ..data is a symlink to it; every user-visible top-level
// entry is a symlink through ..data. A new version is written to a new ..<ts> directory and
// published by renaming a fresh ..data_tmp symlink over ..data, which is atomic: a reader sees
// the old set of files or the new one, never a mix. Names starting with ".." are reserved.
const (
	dataDirName    = "..data"
	newDataDirName = "..data_tmp"
	tsDirLayout    = "..2006_01_02_15_04_05."

	maxFileNameLength = 255
	maxPathLength     = 4096
)

// projectedFile is one file of a volume's payload.
type projectedFile struct {
	Data []byte
	Mode os.FileMode
	// FsUser, when set, owns the file (and its visible link): the kubelet's FileProjection
	// FsUser, given to projected credentials.
	FsUser *int64
}

// payload maps a relative path (validated by validatePayloadPath) to its content.
type payload map[string]projectedFile

// validatePayloadPath is the kubelet's check of a projected path: relative, no ".." element,
// not starting with "..", elements of at most 255 bytes, at most 4096 bytes in all.
func validatePayloadPath(p string) error {
	switch {
	case p == "":
		return errors.New("must not be empty")
	case filepath.IsAbs(p):
		return errors.New("must be a relative path")
	case len(p) > maxPathLength:
		return fmt.Errorf("must be at most %d characters", maxPathLength)
	case filepath.Clean(p) == ".":
		return errors.New("must name a file, not the volume itself")
	}
	elems := strings.Split(p, "/")
	for _, e := range elems {
		if e == ".." {
			return errors.New("must not contain '..'")
		}
		if len(e) > maxFileNameLength {
			return fmt.Errorf("file names must be at most %d characters", maxFileNameLength)
		}
	}
	if strings.HasPrefix(elems[0], "..") {
		return errors.New("must not start with '..'")
	}
	return nil
}

// writeAtomic makes dir hold exactly files, the kubelet's way, and reports whether it had to
// write: when the current version already holds the same paths with the same content, modes
// and owners, nothing is swapped (no new ..<ts> directory), only missing user-visible links
// are recreated. now names the new timestamped directory. own's fsGroup is applied to the
// whole volume (read-only: group read) after a new version is written and before it is
// published, as the kubelet's setPerms, so that no reader ever sees a version without it.
func writeAtomic(ctx context.Context, dir string, files payload, now time.Time, own ownership) (changed bool, err error) {
	clean := make(payload, len(files))
	for p, f := range files {
		if err := validatePayloadPath(p); err != nil {
			return false, fmt.Errorf("path %q: %w", p, err)
		}
		clean[filepath.Clean(p)] = f
	}

	dataLink := filepath.Join(dir, dataDirName)
	oldTs, err := os.Readlink(dataLink)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("reading %s: %w", dataLink, err)
	}
	if oldTs != "" {
		same, err := sameContent(filepath.Join(dir, oldTs), clean, own)
		if err != nil {
			return false, err
		}
		if same {
			return false, publishVisible(dir, clean)
		}
	}

	tsDir, err := os.MkdirTemp(dir, now.UTC().Format(tsDirLayout))
	if err != nil {
		return false, fmt.Errorf("creating data directory: %w", err)
	}
	// MkdirTemp creates 0700; group and others must be able to reach the files (a container
	// user other than the owner reads a 0644 file), and chmod is not subject to the umask.
	if err := os.Chmod(tsDir, 0o755); err != nil {
		_ = os.RemoveAll(tsDir)
		return false, err
	}
	if err := writeFiles(tsDir, clean); err != nil {
		_ = os.RemoveAll(tsDir)
		return false, err
	}
	// The whole volume, not only the new version: the first write also made the volume's
	// own directory, which takes the fsGroup too (the kubelet's setPerms).
	if err := applyFSGroup(ctx, dir, own.fsGroup, true, false); err != nil {
		_ = os.RemoveAll(tsDir)
		return false, fmt.Errorf("applying fsGroup: %w", err)
	}

	tmpLink := filepath.Join(dir, newDataDirName)
	// A ..data_tmp left by a crash between symlink and rename would make Symlink fail.
	if err := os.Remove(tmpLink); err != nil && !errors.Is(err, fs.ErrNotExist) {
		_ = os.RemoveAll(tsDir)
		return false, err
	}
	if err := os.Symlink(filepath.Base(tsDir), tmpLink); err != nil {
		_ = os.RemoveAll(tsDir)
		return false, fmt.Errorf("creating %s: %w", tmpLink, err)
	}
	if err := os.Rename(tmpLink, dataLink); err != nil {
		_ = os.Remove(tmpLink)
		_ = os.RemoveAll(tsDir)
		return false, fmt.Errorf("publishing %s: %w", dataLink, err)
	}

	if err := publishVisible(dir, clean); err != nil {
		return true, err
	}
	// Old versions (the one just replaced, and any a crash left behind) go last: a reader
	// that resolved ..data before the rename keeps reading the old files until now.
	return true, removeStale(dir, filepath.Base(tsDir))
}

// sameContent reports whether tsDir holds exactly the files of want, with the same data, the
// permission bits they have once own is applied, and own's group and each file's FsUser.
func sameContent(tsDir string, want payload, own ownership) (bool, error) {
	seen := 0
	same := true
	err := filepath.WalkDir(tsDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == tsDir || d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(tsDir, p)
		if err != nil {
			return err
		}
		f, ok := want[rel]
		if !ok || !d.Type().IsRegular() {
			same = false
			return filepath.SkipAll
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Mode().Perm() != own.fileMode(f.Mode.Perm(), true) || !ownedBy(info, f.FsUser, own.fsGroup) {
			same = false
			return filepath.SkipAll
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if !bytes.Equal(data, f.Data) {
			same = false
			return filepath.SkipAll
		}
		seen++
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		// ..data points nowhere (removed by hand, or a crash): write a new version.
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("comparing with %s: %w", tsDir, err)
	}
	return same && seen == len(want), nil
}

func writeFiles(tsDir string, files payload) error {
	for rel, f := range files {
		full := filepath.Join(tsDir, rel)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, f.Data, f.Mode.Perm()); err != nil {
			return err
		}
		// WriteFile's mode passes through the umask; the volume must have the asked mode.
		if err := os.Chmod(full, f.Mode.Perm()); err != nil {
			return err
		}
		if f.FsUser != nil {
			if err := os.Lchown(full, int(*f.FsUser), -1); err != nil {
				return fmt.Errorf("giving %s to user %d: %w", rel, *f.FsUser, err)
			}
		}
	}
	return nil
}

// ownedBy reports whether info's file has owner uid and group gid, each when set.
func ownedBy(info fs.FileInfo, uid, gid *int64) bool {
	if uid == nil && gid == nil {
		return true
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return false
	}
	return (uid == nil || int64(st.Uid) == *uid) && (gid == nil || int64(st.Gid) == *gid)
}

// publishVisible makes every top-level name of files a symlink through ..data (creating the
// missing ones) and removes links through ..data whose names the payload no longer has.
// Entries that are not such links (directories made for nested mount points) stay.
func publishVisible(dir string, files payload) error {
	// Each top-level name with the FsUser of (one of) its files: the kubelet gives a new
	// link the owner of the file it was made for.
	top := map[string]*int64{}
	for rel, f := range files {
		name := strings.SplitN(rel, "/", 2)[0]
		if cur, ok := top[name]; !ok || cur == nil {
			top[name] = f.FsUser
		}
	}
	for name, fsUser := range top {
		link := filepath.Join(dir, name)
		if _, err := os.Lstat(link); err == nil {
			continue
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err := os.Symlink(filepath.Join(dataDirName, name), link); err != nil {
			return fmt.Errorf("creating %s: %w", link, err)
		}
		if fsUser != nil {
			if err := os.Lchown(link, int(*fsUser), -1); err != nil {
				return fmt.Errorf("giving %s to user %d: %w", link, *fsUser, err)
			}
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if _, ok := top[name]; ok || strings.HasPrefix(name, "..") || e.Type()&fs.ModeSymlink == 0 {
			continue
		}
		target, err := os.Readlink(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		if strings.HasPrefix(target, dataDirName+"/") {
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				return err
			}
		}
	}
	return nil
}

// removeStale removes every reserved ..<ts> directory but current.
func removeStale(dir, current string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || name == current || !strings.HasPrefix(name, "..") {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// hasData reports whether dir already holds a published version.
func hasData(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, dataDirName))
	return err == nil
}
