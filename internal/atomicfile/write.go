package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// WriteFile writes data to path with permissions perm: a temporary file beside it, written and
// synced, renamed over path, then the directory synced. Without the syncs a crash after the
// rename can leave path empty (the rename reached the disk, the data did not) or the old file
// back (the directory entry did not). On error path is unchanged and the temporary file is gone.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	if err := WriteFileNoDirSync(path, data, perm); err != nil {
		return err
	}
	if err := SyncDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// WriteFileNoDirSync is WriteFile without the directory's sync: the file is whole wherever it is
// seen (its data reached the disk before its name did), but a crash before the directory's next
// sync may lose its name — for a caller that syncs the directory later anyway, or treats a file
// lost that way as never written.
func WriteFileNoDirSync(path string, data []byte, perm os.FileMode) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = os.Remove(tmp.Name())
		}
	}()
	if err := writeSynced(tmp, data, perm); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return os.Rename(tmp.Name(), path)
}

// writeSynced writes data to f, sets perm, syncs and closes it.
func writeSynced(f *os.File, data []byte, perm os.FileMode) error {
	_, err := f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// SyncDir syncs directory dir, so that the entries created, renamed or removed in it are on
// disk.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}
