package cri

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	internalapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"

	"github.com/vk-static/vk-static/lifecycle"
	"github.com/vk-static/vk-static/provider"
)

// DefaultEndpoint is the kubelet's default --container-runtime-endpoint on Linux.
const DefaultEndpoint = "unix:///run/containerd/containerd.sock"

// LabelManaged marks the sandboxes and containers this runtime created, so that it lists only
// its own and never those of another client of the same runtime (a kubelet, crictl, nerdctl).
const LabelManaged = "io.vk-static.managed"

// connectionTimeout is how long a CRI call may wait for the runtime's socket, as the
// kubelet's --runtime-request-timeout default.
const connectionTimeout = 2 * time.Minute

// Config configures New.
type Config struct {
	// RuntimeEndpoint and ImageEndpoint are the CRI sockets (kubelet's
	// --container-runtime-endpoint, --image-service-endpoint; empty ImageEndpoint is
	// RuntimeEndpoint). Ignored when RuntimeService and ImageService are given.
	RuntimeEndpoint string
	ImageEndpoint   string
	// RuntimeService and ImageService replace the connections New would make (tests: cri-api's
	// fakes).
	RuntimeService internalapi.RuntimeService
	ImageService   internalapi.ImageManagerService
	// AllowPrivileged lets pods run privileged containers (--allow-privileged).
	AllowPrivileged bool
	// ImageGCHighThreshold and ImageGCLowThreshold are percentages of the image filesystem:
	// above the high one, unused images are removed down to the low one. 0 and 0 disable
	// image garbage collection; a high threshold of 100 too, as the kubelet.
	ImageGCHighThreshold int
	ImageGCLowThreshold  int
	// ImageMinimumGCAge keeps an unused image that this runtime first saw less than that long
	// ago from the image garbage collector and from the reclaim under disk pressure: it may
	// have just been pulled or imported for a pod about to start (the kubelet's
	// imageMinimumGCAge, --minimum-image-ttl-duration, 2 minutes by default there). 0 keeps
	// none back.
	ImageMinimumGCAge time.Duration
	// LogMaxSize and LogMaxFiles rotate the containers' logs (--container-log-max-size,
	// --container-log-max-files): a log above LogMaxSize bytes is rotated, LogMaxFiles files
	// are kept, the current one included. LogMaxSize 0 leaves logs unrotated.
	LogMaxSize  int64
	LogMaxFiles int
	// SeccompProfileRoot is the directory a Localhost seccomp profile is relative to (the
	// kubelet's <root-dir>/seccomp).
	SeccompProfileRoot string
	// RelistPeriod is how often containers are listed when the runtime has no container
	// events; 0 is the kubelet's 1 s.
	RelistPeriod time.Duration
	// Clock is the time source; nil is the real clock.
	Clock clock.WithTicker
}

// Runtime is a lifecycle.Runtime and lifecycle.ImageService over a CRI v1 runtime.
type Runtime struct {
	cfg     Config
	rs      internalapi.RuntimeService
	is      internalapi.ImageManagerService
	version *runtimeapi.VersionResponse

	// close closes the connections New made, once (Close); services given in Config are their
	// giver's.
	close func() error

	mu sync.Mutex
	// sandboxConfigs are the configs of the sandboxes this process created, which CRI's
	// CreateContainer takes again; a sandbox from before a restart has its config rebuilt.
	sandboxConfigs map[string]*runtimeapi.PodSandboxConfig

	// images are what the image garbage collector and the reclaim under disk pressure know of
	// each image: one record for both, so that an image's age counts from when it was first
	// seen by either.
	images imageRecords
}

var (
	_ lifecycle.Runtime      = (*Runtime)(nil)
	_ lifecycle.ImageService = (*Runtime)(nil)
)

// ErrUnavailable is returned by New when the runtime does not answer.
var ErrUnavailable = errors.New("container runtime unavailable")

// New connects to the runtime and asks its version; an unreachable runtime is ErrUnavailable.
// The connections it makes are given back by Close, or by New itself when it fails.
func New(ctx context.Context, cfg Config) (_ *Runtime, err error) {
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.RelistPeriod <= 0 {
		cfg.RelistPeriod = time.Second
	}
	if cfg.RuntimeEndpoint == "" {
		cfg.RuntimeEndpoint = DefaultEndpoint
	}
	if cfg.ImageEndpoint == "" {
		cfg.ImageEndpoint = cfg.RuntimeEndpoint
	}
	r := &Runtime{cfg: cfg, rs: cfg.RuntimeService, is: cfg.ImageService, sandboxConfigs: map[string]*runtimeapi.PodSandboxConfig{},
		images: imageRecords{byID: map[string]*imageRecord{}}}
	// What New dials, New closes if it fails and Close otherwise.
	var dialled []interface{ Close(context.Context) error }
	r.close = sync.OnceValue(func() error {
		var errs []error
		for _, c := range dialled {
			errs = append(errs, c.Close(context.Background()))
		}
		return errors.Join(errs...)
	})
	defer func() {
		if err != nil {
			_ = r.close() // New's error says what went wrong
		}
	}()
	if r.rs == nil {
		rs, err := newRemoteRuntime(cfg.RuntimeEndpoint, connectionTimeout)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrUnavailable, cfg.RuntimeEndpoint, err)
		}
		r.rs, dialled = rs, append(dialled, rs)
	}
	if rs, ok := r.rs.(*remoteRuntime); ok && r.is == nil && cfg.ImageEndpoint == cfg.RuntimeEndpoint {
		r.is = rs.images() // on the runtime's connection, closed with it
	}
	if r.is == nil {
		is, err := newRemoteImages(cfg.ImageEndpoint, connectionTimeout)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrUnavailable, cfg.ImageEndpoint, err)
		}
		r.is, dialled = is, append(dialled, is)
	}
	vctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if r.version, err = r.rs.Version(vctx, "v1"); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrUnavailable, cfg.RuntimeEndpoint, err)
	}
	if _, err = r.is.ImageFsInfo(vctx); err != nil {
		return nil, fmt.Errorf("%w: image service %s: %v", ErrUnavailable, cfg.ImageEndpoint, err)
	}
	return r, nil
}

// Name is the runtime's name ("containerd"), the scheme of the container IDs in pod statuses.
func (r *Runtime) Name() string { return r.version.GetRuntimeName() }

// Version is the runtime's version ("v1.6.20").
func (r *Runtime) Version() string { return r.version.GetRuntimeVersion() }

// Close closes the connections New made to the runtime, once however many times it is called
// (the same error each time), as lifecycle.Runtime asks: the lifecycle Provider the Runtime is
// given to closes it. The containers keep running. A RuntimeService or ImageService given in
// Config is left open: it is its giver's to close.
func (r *Runtime) Close() error { return r.close() }

// networkReady says whether the runtime reports its pod network ready (a CNI configuration).
func (r *Runtime) networkReady(ctx context.Context) (bool, error) {
	st, err := r.rs.Status(ctx, false)
	if err != nil {
		return false, err
	}
	for _, c := range st.GetStatus().GetConditions() {
		if c.GetType() == runtimeapi.NetworkReady {
			return c.GetStatus(), nil
		}
	}
	return false, nil
}

// notFound turns CRI's NotFound into the lifecycle's provider.IsNotFound error.
func notFound(err error, what, id string) error {
	if err == nil {
		return nil
	}
	if status.Code(err) == codes.NotFound {
		return provider.NotFound("%s %s: %v", what, id, err)
	}
	return err
}
