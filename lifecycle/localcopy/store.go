package localcopy

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/vk-static/vk-static/internal/atomicfile"
	"github.com/vk-static/vk-static/lifecycle/env"
	"github.com/vk-static/vk-static/nodeobjects"
)

// dirName is the directory of a pod's copy, in the pod's directory.
const dirName = "local-copy"

// Config is what a Store wraps. Any getter may be nil (standalone: no API server), and the
// Store then gives none either.
type Config struct {
	// PodsDir holds the pods' directories, <PodsDir>/<uid>, which the lifecycle creates with the
	// pod's record and removes when it forgets the pod.
	PodsDir        string
	Objects        nodeobjects.ObjectGetter
	Tokens         nodeobjects.TokenRequester
	Services       env.Services
	RuntimeClasses nodeobjects.RuntimeClassGetter
	// Clock tells whether a kept token has expired. Nil: the real clock.
	Clock clock.Clock
}

// Store keeps the pods' copies. It is safe for concurrent use; the lifecycle reads a pod's
// objects from its worker, one at a time.
type Store struct {
	cfg Config
}

// New returns a Store over cfg's getters. It creates nothing: a pod's directory is created
// when something of it is first kept.
func New(cfg Config) *Store {
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	return &Store{cfg: cfg}
}

// Dir is the directory of the copy of pod uid.
func (s *Store) Dir(uid types.UID) string {
	return filepath.Join(s.cfg.PodsDir, string(uid), dirName)
}

// keep writes obj as file in pod uid's copy, unless the same content is already there. It
// writes nothing (and no error) when the pod's directory does not exist: the pod was
// forgotten, or not recorded yet, and a copy must not outlive it.
func (s *Store) keep(uid types.UID, file string, obj any) error {
	data, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	dir := s.Dir(uid)
	path := filepath.Join(dir, file)
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return nil
	}
	switch err := os.Mkdir(dir, 0o700); {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err == nil:
		// Its entry in the pod's directory must reach the disk too.
		if err := atomicfile.SyncDir(filepath.Dir(dir)); err != nil {
			return err
		}
	case !errors.Is(err, os.ErrExist):
		return err
	}
	return atomicfile.WriteFile(path, data, 0o600)
}

// load reads file of pod uid's copy into obj; false when there is none (or it cannot be
// read, which the error says).
func (s *Store) load(uid types.UID, file string, obj any) (bool, error) {
	data, err := os.ReadFile(filepath.Join(s.Dir(uid), file))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(data, obj); err != nil {
		return false, err
	}
	return true, nil
}

// drop removes file from pod uid's copy.
func (s *Store) drop(uid types.UID, file string) error {
	err := os.Remove(filepath.Join(s.Dir(uid), file))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// Forget removes the copy of pod uid. The lifecycle need not call it when it removes the pod's
// directory, which holds the copy.
func (s *Store) Forget(uid types.UID) error {
	return os.RemoveAll(s.Dir(uid))
}
