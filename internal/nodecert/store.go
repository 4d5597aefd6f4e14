package nodecert

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	certutil "k8s.io/client-go/util/cert"
	"k8s.io/utils/clock"
)

// errNoPair is what a store without a pair returns from Current: the caller falls back to its
// bootstrap credentials.
var errNoPair = errors.New("no certificate and key")

// store keeps a certificate and its key in a directory with the kubelet's layout (client-go's
// certificate.FileStore), so that a directory written by the kubelet, or by an earlier
// version of this agent, keeps working and the other way round:
//
//   - <prefix>-<yyyy-mm-dd-hh-mm-ss>.pem: one pair per issue, certificate chain then key, 0600;
//     never written over once it exists (a second pair within the same second gets the name
//     with -1, -2, … added), because it may be the file current points at, which readers open
//     at any time;
//   - <prefix>-current.pem: a symlink to the newest, by absolute path; kubeconfigs and the
//     operator's tools name this path, never a timestamped one;
//   - <prefix>-updated.pem: the new symlink while it replaces the current one, renamed over it
//     (rename is atomic where removing and re-creating would leave no current pair); a crash
//     between the two leaves it behind and the next start finishes the rename;
//   - <prefix>.crt and <prefix>.key: a pair an operator placed, read when there is no current.
type store struct {
	dir    string
	prefix string
	// clock names the timestamped files.
	clock clock.PassiveClock
}

// newStore opens the store of pair prefix in dir, finishing a replacement a crash interrupted.
func newStore(dir, prefix string, clk clock.PassiveClock) (*store, error) {
	s := &store{dir: dir, prefix: prefix, clock: clk}
	if err := s.recover(); err != nil {
		return nil, err
	}
	return s, nil
}

// CurrentPath is the path of the current pair, certificate and key in one file.
func (s *store) CurrentPath() string { return s.path("current") }

func (s *store) path(qualifier string) string {
	return filepath.Join(s.dir, s.prefix+"-"+qualifier+".pem")
}

// recover renames a left-over updated symlink to current when there is no current.
func (s *store) recover() error {
	if _, err := os.Stat(s.CurrentPath()); err == nil {
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	updated := s.path("updated")
	fi, err := os.Lstat(updated)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	if fi.Mode()&os.ModeSymlink == 0 {
		return fmt.Errorf("%s: expected a symlink, found a file", updated)
	}
	return os.Rename(updated, s.CurrentPath())
}

// Current is the current pair with its leaf certificate parsed, or errNoPair if there is none.
func (s *store) Current() (*tls.Certificate, error) {
	if exists, err := fileExists(s.CurrentPath()); err != nil {
		return nil, err
	} else if exists {
		return loadPair(s.CurrentPath(), s.CurrentPath())
	}
	certPath, keyPath := filepath.Join(s.dir, s.prefix+".crt"), filepath.Join(s.dir, s.prefix+".key")
	certExists, err := fileExists(certPath)
	if err != nil {
		return nil, err
	}
	keyExists, err := fileExists(keyPath)
	if err != nil {
		return nil, err
	}
	if certExists && keyExists {
		return loadPair(certPath, keyPath)
	}
	return nil, fmt.Errorf("%w in %s (%s, or %s and %s)", errNoPair, s.dir, filepath.Base(s.CurrentPath()), filepath.Base(certPath), filepath.Base(keyPath))
}

// Update writes a new pair to a timestamped file, durably, and makes it the current one.
func (s *store) Update(certPEM, keyPEM []byte) (*tls.Certificate, error) {
	certs, err := certutil.ParseCertsPEM(certPEM)
	if err != nil {
		return nil, fmt.Errorf("invalid certificate: %w", err)
	}
	keyBlock, _ := pem.Decode(keyPEM)
	if keyBlock == nil {
		return nil, errors.New("invalid key: no PEM block")
	}
	// Only the parsed blocks: no text or headers around them end up in the file.
	var data []byte
	for _, c := range certs {
		data = append(data, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})...)
	}
	data = append(data, pem.EncodeToMemory(keyBlock)...)

	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return nil, err
	}
	path, err := writeNew(s.path(s.clock.Now().Format("2006-01-02-15-04-05")), data)
	if err != nil {
		return nil, err
	}
	cert, err := loadPair(path, path)
	if err != nil {
		_ = os.Remove(path) // not a pair (a key of another certificate): never current
		return nil, err
	}
	if err := s.point(path); err != nil {
		return nil, err
	}
	return cert, nil
}

// maxSameSecond bounds the names writeNew tries for one second; more pairs than that in a
// second is a loop gone wrong, better an error than a directory filling up.
const maxSameSecond = 100

// writeNew writes data to a file that did not exist, path or, if that exists, path with -1,
// -2, … before its .pem, and returns the name it used. client-go's FileStore names the file
// by the second too but opens it with O_TRUNC: two pairs stored within one second (the
// bootstrap pair, then its first renewal; a quick retry) rewrote in place the file current
// pointed at, and a reader in between found half a file or the new certificate with the old
// key. O_EXCL makes each pair a file of its own; current moves to it only once it is whole.
// Nothing reads these names but through current, so the suffix is no one's concern.
func writeNew(path string, data []byte) (string, error) {
	base := strings.TrimSuffix(path, ".pem")
	for i := 0; i < maxSameSecond; i++ {
		name := path
		if i > 0 {
			name = fmt.Sprintf("%s-%d.pem", base, i)
		}
		err := writeSynced(name, data)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return name, err
	}
	return "", fmt.Errorf("%s: %d pairs stored within one second", path, maxSameSecond)
}

// writeSynced writes data to a new file path (mode 0600) and syncs it: the symlink must never
// name a file a power loss left empty. It fails with fs.ErrExist if path exists. A file it
// could not finish is removed: it has a name of its own, which current never pointed at.
func writeSynced(path string, data []byte) (err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = os.Remove(path)
		}
	}()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// point makes current a symlink to target, through the updated symlink. A current or updated
// that is a regular file is refused rather than replaced: it is not this store's.
func (s *store) point(target string) error {
	current, updated := s.CurrentPath(), s.path("updated")
	for _, p := range []string{current, updated} {
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			return err
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			return fmt.Errorf("%s: expected a symlink, found a file", p)
		}
	}
	if err := os.Remove(updated); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	// Absolute, so that the link is right whatever the directory was named relative to.
	target, err := filepath.Abs(target)
	if err != nil {
		return err
	}
	if err := os.Symlink(target, updated); err != nil {
		return err
	}
	return os.Rename(updated, current)
}

// loadPair reads a certificate and key (one file may hold both) and parses the leaf.
func loadPair(certPath, keyPath string) (*tls.Certificate, error) {
	cert, err := tls.LoadX509KeyPair(certPath, keyPath)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", certPath, err)
	}
	if cert.Leaf == nil {
		if cert.Leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
			return nil, fmt.Errorf("%s: %w", certPath, err)
		}
	}
	return &cert, nil
}

func fileExists(path string) (bool, error) {
	_, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}
