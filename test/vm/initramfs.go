package vm

import (
	"compress/gzip"
	"debug/elf"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"

	"github.com/cavaliergopher/cpio"
)

// libraryDirs are where a dynamically linked test binary's libraries are looked for, as the
// dynamic loader of a Debian amd64 host finds them.
var libraryDirs = []string{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/lib", "/usr/lib"}

// initramfs is the machine's root file system as it is written: files by their path in the
// machine, each from a file on the host or from bytes.
type initramfs struct {
	files map[string]source
}

type source struct {
	host string // a file on the host, or
	data []byte // its content
	mode os.FileMode
}

// add puts the host file at host in the machine at guest, with what it needs to run when it
// is a dynamically linked executable: its ELF interpreter and the libraries it links, at the
// same paths as on the host.
func (r *initramfs) add(guest, host string, mode os.FileMode) error {
	r.files[guest] = source{host: host, mode: mode}
	f, err := elf.Open(host)
	if err != nil {
		return nil // not an ELF file: nothing it links
	}
	defer f.Close()
	return r.addLinked(f)
}

// addLinked adds the interpreter and the libraries of the ELF file f, and theirs.
func (r *initramfs) addLinked(f *elf.File) error {
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			interp, err := io.ReadAll(p.Open())
			if err != nil {
				return err
			}
			name := string(interp[:len(interp)-1]) // NUL-terminated
			if err := r.addLibrary(name); err != nil {
				return err
			}
		}
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		return err
	}
	for _, lib := range libs {
		found := ""
		for _, dir := range libraryDirs {
			if _, err := os.Stat(filepath.Join(dir, lib)); err == nil {
				found = filepath.Join(dir, lib)
				break
			}
		}
		if found == "" {
			return fmt.Errorf("library %s not found in %v", lib, libraryDirs)
		}
		if err := r.addLibrary(found); err != nil {
			return err
		}
	}
	return nil
}

func (r *initramfs) addLibrary(p string) error {
	if _, ok := r.files[p]; ok {
		return nil
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return err
	}
	r.files[p] = source{host: real, mode: 0o755}
	f, err := elf.Open(real)
	if err != nil {
		return fmt.Errorf("library %s: %w", p, err)
	}
	defer f.Close()
	return r.addLinked(f)
}

// newInitramfs lays out the machine's files: init, busybox, the tests and their list.
func newInitramfs(cfg *Config) (*initramfs, error) {
	r := &initramfs{files: map[string]source{}}
	if err := r.add("/init", cfg.Init, 0o755); err != nil {
		return nil, fmt.Errorf("init: %w", err)
	}
	if err := r.add("/bin/busybox", cfg.Busybox, 0o755); err != nil {
		return nil, fmt.Errorf("busybox: %w", err)
	}
	for _, t := range cfg.Tests {
		if err := r.add(BinaryPath(t.Name), t.Binary, 0o755); err != nil {
			return nil, fmt.Errorf("test %s: %w", t.Name, err)
		}
	}
	list, err := json.Marshal(cfg.Tests)
	if err != nil {
		return nil, err
	}
	r.files[TestsFile] = source{data: list, mode: 0o644}
	return r, nil
}

// write writes the initramfs as a gzip-compressed newc cpio archive, directories before what
// they hold.
func (r *initramfs) write(w io.Writer) error {
	zw, err := gzip.NewWriterLevel(w, gzip.BestSpeed)
	if err != nil {
		return err
	}
	cw := cpio.NewWriter(zw)
	dirs := map[string]bool{}
	var names []string
	for name := range r.files {
		names = append(names, name)
		for dir := path.Dir(name); dir != "/"; dir = path.Dir(dir) {
			dirs[dir] = true
		}
	}
	for _, dir := range []string{"/dev", "/proc", "/sys", "/tmp", "/run", "/etc", "/root"} {
		dirs[dir] = true
	}
	var dirNames []string
	for dir := range dirs {
		dirNames = append(dirNames, dir)
	}
	slices.Sort(dirNames) // a parent sorts before its children
	for _, dir := range dirNames {
		if err := cw.WriteHeader(&cpio.Header{Name: dir[1:], Mode: cpio.TypeDir | 0o755, Links: 2}); err != nil {
			return err
		}
	}
	slices.Sort(names)
	for _, name := range names {
		src := r.files[name]
		data := src.data
		if src.host != "" {
			if data, err = os.ReadFile(src.host); err != nil {
				return err
			}
		}
		if err := cw.WriteHeader(&cpio.Header{Name: name[1:], Mode: cpio.TypeReg | cpio.FileMode(src.mode.Perm()), Size: int64(len(data))}); err != nil {
			return err
		}
		if _, err := cw.Write(data); err != nil {
			return err
		}
	}
	if err := cw.Close(); err != nil {
		return err
	}
	return zw.Close()
}
