package volume

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/vk-static/vk-static/nodeobjects"
)

// Config is what a Manager needs from the agent.
type Config struct {
	// PodsDir is <root-dir>/pods. A pod's volumes live in
	// <PodsDir>/<uid>/volumes/<plugin>/<name>, with the kubelet's plugin directory names.
	PodsDir string
	// AllowedHostPaths are the prefixes hostPath volumes may name (whole path elements:
	// /srv allows /srv and /srv/x, not /srv2). Empty allows none.
	AllowedHostPaths []string
	// HostPathFlag is the flag that sets AllowedHostPaths, named in refusals so that the
	// operator knows what to change, e.g. "--process-allowed-host-paths".
	HostPathFlag string
	// AllowedHostPaths govern API pods, whose authors are whoever may create pods in the
	// cluster. Static pods (file and HTTP sources, podutil.IsStaticPod) may use any host path,
	// as the kubelet lets them: their manifests are the node administrator's. RestrictStaticPods
	// holds them to AllowedHostPaths too; RestrictStaticPodsFlag is the flag that sets it, named
	// in their refusals.
	RestrictStaticPods     bool
	RestrictStaticPodsFlag string
	// Objects reads the ConfigMaps and Secrets that volumes project, with the node's identity;
	// nil when there is no API server, and then volumes that need one are refused.
	Objects nodeobjects.ObjectGetter
	// ObjectsFor, when set, gives the ObjectGetter of one pod's objects, read instead of
	// Objects (which still says whether there is an API server at all): the lifecycle's copy
	// of what each pod read (lifecycle/localcopy), which answers while the API server cannot
	// be reached.
	ObjectsFor func(pod *corev1.Pod) nodeobjects.ObjectGetter
	// Tokens requests the service account tokens of projected serviceAccountToken sources
	// (every API pod has one, in its kube-api-access-* volume); nil when there is no API
	// server, and then such volumes are refused.
	Tokens nodeobjects.TokenRequester
	// Clock names the timestamped data directories of projected volumes and ages the cached
	// tokens. Nil: the real clock.
	Clock clock.Clock
	// CanMount says whether tmpfs and bind mounts can be made here (root in the initial user
	// namespace). When false, an emptyDir with medium Memory is a plain directory, with a
	// warning, and a subPath is handed to the runtime as its checked path, not bound at a
	// mount point of the pod's own (Mounts).
	CanMount bool
}

// Manager prepares pods' volumes on the host. Its methods are safe for concurrent use; calls
// for the same pod are serialized.
type Manager struct {
	podsDir      string
	allowedHosts []string
	hostPathFlag string
	// restrictStatic holds static pods to allowedHosts (restrictStaticFlag sets it).
	restrictStatic     bool
	restrictStaticFlag string
	objects            nodeobjects.ObjectGetter
	objectsFor         func(pod *corev1.Pod) nodeobjects.ObjectGetter
	tokens             *tokenCache
	clock              clock.Clock
	canMount           bool
	locks              podLocks
}

// New checks cfg and creates PodsDir if it does not exist yet.
func New(cfg Config) (*Manager, error) {
	if cfg.PodsDir == "" || !filepath.IsAbs(cfg.PodsDir) {
		return nil, fmt.Errorf("volume: PodsDir %q must be an absolute path", cfg.PodsDir)
	}
	if err := os.MkdirAll(cfg.PodsDir, 0o750); err != nil {
		return nil, fmt.Errorf("volume: creating pods directory: %w", err)
	}
	// The mount table names canonical paths; resolve PodsDir once so that mount points
	// under it are recognized.
	podsDir, err := filepath.EvalSymlinks(cfg.PodsDir)
	if err != nil {
		return nil, fmt.Errorf("volume: resolving pods directory: %w", err)
	}
	var allowed []string
	for _, p := range cfg.AllowedHostPaths {
		if !filepath.IsAbs(p) {
			return nil, fmt.Errorf("volume: allowed host path %q must be absolute", p)
		}
		allowed = append(allowed, filepath.Clean(p))
	}
	flag := cfg.HostPathFlag
	if flag == "" {
		flag = "the allowed host paths"
	}
	clk := cfg.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &Manager{
		podsDir:            podsDir,
		allowedHosts:       allowed,
		hostPathFlag:       flag,
		restrictStatic:     cfg.RestrictStaticPods,
		restrictStaticFlag: cfg.RestrictStaticPodsFlag,
		objects:            cfg.Objects,
		objectsFor:         cfg.ObjectsFor,
		tokens:             newTokenCache(cfg.Tokens, clk),
		clock:              clk,
		canMount:           cfg.CanMount,
		locks:              newPodLocks(),
	}, nil
}

var errNoUID = errors.New("volume: pod has no UID")

// podObjects is the ObjectGetter of pod's config maps and secrets (Config.ObjectsFor), nil
// when there is no API server.
func (m *Manager) podObjects(pod *corev1.Pod) nodeobjects.ObjectGetter {
	if m.objects == nil || m.objectsFor == nil {
		return m.objects
	}
	return m.objectsFor(pod)
}
