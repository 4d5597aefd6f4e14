package volume

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/lifecycle/env"
)

// Volumes maps a pod's volume names to their paths on the host.
type Volumes map[string]string

const supportedKinds = "emptyDir, hostPath, configMap, secret, downwardAPI, projected"

// Setup makes every volume of pod exist on the host and returns their paths, with warnings for
// the pod's Events. It is idempotent: called again (after an agent restart) it keeps what is
// there — an emptyDir's content, a mounted tmpfs — and brings configMap, secret, downwardAPI
// and projected volumes up to date; when their object cannot be read then but an earlier
// version is on disk, that version stays and a warning says why.
//
// It sets up every volume it can and returns all the errors joined: *FieldError for what this
// node refuses, *MissingObjectError for a required object or key that does not exist (retry),
// anything else for a failure worth retrying. On error the returned Volumes is nil.
func (m *Manager) Setup(ctx context.Context, pod *corev1.Pod, facts env.PodFacts, allocatable corev1.ResourceList) (Volumes, []string, error) {
	if err := checkUID(pod.UID); err != nil {
		return nil, nil, err
	}
	if err := checkVolumeNames(pod); err != nil {
		return nil, nil, err
	}
	unlock := m.locks.lock(pod.UID)
	defer unlock()

	in := downwardInputs{facts: facts, allocatable: allocatable}
	vols := Volumes{}
	var warnings []string
	var errs []error
	for i := range pod.Spec.Volumes {
		path, warns, err := m.setupVolume(ctx, pod, i, in)
		warnings = append(warnings, warns...)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		vols[pod.Spec.Volumes[i].Name] = path
	}
	if len(errs) > 0 {
		return nil, warnings, errors.Join(errs...)
	}
	return vols, warnings, nil
}

func (m *Manager) setupVolume(ctx context.Context, pod *corev1.Pod, i int, in downwardInputs) (string, []string, error) {
	v := &pod.Spec.Volumes[i]
	switch {
	case v.EmptyDir != nil:
		return m.setupEmptyDir(ctx, pod, i, in.allocatable)
	case v.HostPath != nil:
		path, err := m.setupHostPath(pod, i)
		return path, nil, err
	}
	if _, ok := apiVolumeKind(v); ok {
		dir, _, warnings, err := m.writeAPIVolume(ctx, pod, i, in, true)
		return dir, warnings, err
	}
	return "", nil, unsupportedVolume(i, v)
}

// Refresh rewrites pod's configMap, secret, downwardAPI and projected volumes whose content
// changed — the kubelet's periodic remount of these volumes, for the caller's periodic pod
// sync. An unchanged volume is not written at all (no new data directory); a volume Setup has
// not made yet is left to Setup. It reports whether any volume changed. On error the volume
// keeps its previous content.
func (m *Manager) Refresh(ctx context.Context, pod *corev1.Pod, facts env.PodFacts, allocatable corev1.ResourceList) (bool, error) {
	if err := checkUID(pod.UID); err != nil {
		return false, err
	}
	if err := checkVolumeNames(pod); err != nil {
		return false, err
	}
	unlock := m.locks.lock(pod.UID)
	defer unlock()

	in := downwardInputs{facts: facts, allocatable: allocatable}
	changed := false
	var errs []error
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		kind, ok := apiVolumeKind(v)
		// A volume Setup has not made (or Teardown removed) is not Refresh's to make: a
		// Refresh racing a Teardown would otherwise leave a directory, or a tmpfs, behind.
		if !ok || !hasData(m.volumeDir(pod.UID, kind.plugin, v.Name)) {
			continue
		}
		_, c, _, err := m.writeAPIVolume(ctx, pod, i, in, false)
		changed = changed || c
		if err != nil {
			errs = append(errs, err)
		}
	}
	return changed, errors.Join(errs...)
}

// writeAPIVolume makes the directory of volume i (tmpfs where the kubelet uses one) and writes
// its files atomically. keepOnError: a failure to compute the files (an unreadable or deleted
// object) keeps a version already on disk and becomes a warning — Setup's rule after a
// restart; a refusal of the spec is an error regardless.
func (m *Manager) writeAPIVolume(ctx context.Context, pod *corev1.Pod, i int, in downwardInputs, keepOnError bool) (string, bool, []string, error) {
	v := &pod.Spec.Volumes[i]
	kind, _ := apiVolumeKind(v)
	dir := m.volumeDir(pod.UID, kind.plugin, v.Name)

	files, err := m.apiPayload(ctx, pod, i, in)
	if err != nil {
		var refusal *FieldError
		if keepOnError && !errors.As(err, &refusal) && hasData(dir) {
			return dir, false, []string{fmt.Sprintf(
				"spec.volumes[%d] (%s): keeping the files already on the node: %v", i, v.Name, err)}, nil
		}
		return "", false, nil, err
	}

	var warnings []string
	if kind.memory {
		w, err := m.makeMemoryDir(ctx, dir, memoryVolumeSize(pod, nil, in.allocatable), fmt.Sprintf("spec.volumes[%d] (%s)", i, v.Name))
		if err != nil {
			return "", false, nil, err
		}
		if kind.secretData {
			warnings = append(warnings, w...)
		}
	} else if err := makeVolumeDir(dir); err != nil {
		return "", false, nil, err
	}
	makeNestedMountpoints(ctx, pod, v.Name, dir)
	changed, err := writeAtomic(ctx, dir, files, m.clock.Now(), podOwnership(pod))
	if err != nil {
		return "", changed, warnings, fmt.Errorf("spec.volumes[%d] (%s): writing files: %w", i, v.Name, err)
	}
	if changed {
		klog.FromContext(ctx).V(3).Info("Wrote volume", "pod", klog.KObj(pod), "volume", v.Name, "files", len(files))
	}
	return dir, changed, warnings, nil
}

// unsupportedVolume refuses volume i, naming its source field by its JSON name.
func unsupportedVolume(i int, v *corev1.Volume) error {
	field := fmt.Sprintf("spec.volumes[%d]", i)
	raw, err := json.Marshal(v.VolumeSource)
	if err != nil {
		return refuse(field, v.Name, "volume source not supported on this node (supported: %s)", supportedKinds)
	}
	var set map[string]json.RawMessage
	_ = json.Unmarshal(raw, &set)
	if len(set) == 0 {
		return refuse(field, v.Name, "no volume source set (supported on this node: %s)", supportedKinds)
	}
	kinds := slices.Sorted(func(yield func(string) bool) {
		for k := range set {
			if !yield(k) {
				return
			}
		}
	})
	return refuse(field+"."+kinds[0], "", "%s volumes are not supported on this node (supported: %s)", kinds[0], supportedKinds)
}

// checkUID refuses a UID that is not one safe path element: it names a directory under PodsDir.
func checkUID(uid types.UID) error {
	s := string(uid)
	if s == "" {
		return errNoUID
	}
	if !isPathElement(s) {
		return fmt.Errorf("volume: pod UID %q cannot name a directory", s)
	}
	return nil
}

// isPathElement reports whether s names one directory entry: not empty, not "." or "..", no
// "/" and no NUL.
func isPathElement(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, "/\x00")
}

// checkVolumeNames refuses volume names that are not one safe path element (the API's DNS
// label rule guarantees it; a static pod's file may not have passed it) and duplicates.
func checkVolumeNames(pod *corev1.Pod) error {
	seen := map[string]bool{}
	var errs []error
	for i, v := range pod.Spec.Volumes {
		field := fmt.Sprintf("spec.volumes[%d].name", i)
		switch {
		case !isPathElement(v.Name):
			errs = append(errs, refuse(field, v.Name, "must be a DNS label (it names a directory)"))
		case seen[v.Name]:
			errs = append(errs, refuse(field, v.Name, "duplicate volume name"))
		}
		seen[v.Name] = true
	}
	return errors.Join(errs...)
}
