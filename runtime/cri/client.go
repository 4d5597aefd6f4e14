package cri

// The CRI client: cri-api's generated gRPC clients behind cri-api's internalapi interfaces,
// as k8s.io/cri-client's remote runtime and image services, without what the agent does not
// use. cri-client links OpenTelemetry (its otelgrpc interceptors, megabytes of every agent's
// binary and memory, even when given no tracer) and component-base's log reduction; what
// matters of it is kept here: unix sockets only, the kubelet's per-call timeout
// (--runtime-request-timeout, twice it for RunPodSandbox, plus the grace period for
// StopContainer, none for image pulls and event streams), 16 MiB answers, reconnection with
// a 100 ms to 3 s backoff, unknown-code pull errors reduced to their message, and the same
// checks of the answers (a missing ID, URL or required status field is an error). Lists are
// the unary RPCs: cri-client streams them only behind the CRIListStreaming gate, off here.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	internalapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	utilexec "k8s.io/utils/exec"
)

// maxMsgSize is the largest answer accepted: the kubelet's 16 MiB, not gRPC's 4 MiB (a
// ListContainers of thousands of containers is larger).
const maxMsgSize = 16 << 20

// dialCRI makes a connection to the unix socket endpoint ("unix:///run/x.sock" or a path).
// It does not connect yet: the first call does, and waits no longer than its timeout.
func dialCRI(endpoint string) (*grpc.ClientConn, error) {
	path, err := socketPath(endpoint)
	if err != nil {
		return nil, err
	}
	params := grpc.ConnectParams{Backoff: backoff.DefaultConfig, MinConnectTimeout: 5 * time.Second}
	params.Backoff.BaseDelay, params.Backoff.MaxDelay = 100*time.Millisecond, 3*time.Second
	return grpc.NewClient("passthrough:///"+path,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithAuthority("localhost"),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", addr)
		}),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMsgSize)),
		grpc.WithConnectParams(params))
}

// socketPath is the socket of a CRI endpoint; an endpoint without a scheme is a unix one.
func socketPath(endpoint string) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil || u.Scheme == "" {
		if u, err = url.Parse("unix://" + endpoint); err != nil {
			return "", err
		}
	}
	if u.Scheme != "unix" {
		return "", fmt.Errorf("CRI endpoint %q: only unix sockets are supported", endpoint)
	}
	return u.Path, nil
}

// unary calls a CRI method with a deadline timeout from now.
func unary[Req, Resp any](ctx context.Context, timeout time.Duration, call func(context.Context, Req, ...grpc.CallOption) (Resp, error), req Req) (Resp, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return call(ctx, req)
}

// remoteRuntime is an internalapi.RuntimeService over a connection to the runtime.
type remoteRuntime struct {
	conn    *grpc.ClientConn
	c       runtimeapi.RuntimeServiceClient
	timeout time.Duration
}

var _ internalapi.RuntimeService = (*remoteRuntime)(nil)

// newRemoteRuntime is a RuntimeService at endpoint whose calls time out after timeout.
func newRemoteRuntime(endpoint string, timeout time.Duration) (*remoteRuntime, error) {
	conn, err := dialCRI(endpoint)
	if err != nil {
		return nil, err
	}
	return &remoteRuntime{conn: conn, c: runtimeapi.NewRuntimeServiceClient(conn), timeout: timeout}, nil
}

func (r *remoteRuntime) Close(context.Context) error { return r.conn.Close() }

func (r *remoteRuntime) Version(ctx context.Context, apiVersion string) (*runtimeapi.VersionResponse, error) {
	v, err := unary(ctx, r.timeout, r.c.Version, &runtimeapi.VersionRequest{Version: apiVersion})
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, f := range []struct{ name, value string }{{"Version", v.Version}, {"RuntimeName", v.RuntimeName}, {"RuntimeApiVersion", v.RuntimeApiVersion}, {"RuntimeVersion", v.RuntimeVersion}} {
		if f.value == "" {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("not all fields are set in VersionResponse (missing %s)", strings.Join(missing, ", "))
	}
	return v, nil
}

func (r *remoteRuntime) Status(ctx context.Context, verbose bool) (*runtimeapi.StatusResponse, error) {
	resp, err := unary(ctx, r.timeout, r.c.Status, &runtimeapi.StatusRequest{Verbose: verbose})
	if err != nil {
		return nil, err
	}
	if len(resp.GetStatus().GetConditions()) < 2 {
		return nil, errors.New("RuntimeReady or NetworkReady condition are not set")
	}
	return resp, nil
}

func (r *remoteRuntime) RuntimeConfig(ctx context.Context) (*runtimeapi.RuntimeConfigResponse, error) {
	return unary(ctx, r.timeout, r.c.RuntimeConfig, &runtimeapi.RuntimeConfigRequest{})
}

func (r *remoteRuntime) UpdateRuntimeConfig(ctx context.Context, cfg *runtimeapi.RuntimeConfig) error {
	_, err := unary(ctx, r.timeout, r.c.UpdateRuntimeConfig, &runtimeapi.UpdateRuntimeConfigRequest{RuntimeConfig: cfg})
	return err
}

func (r *remoteRuntime) RunPodSandbox(ctx context.Context, config *runtimeapi.PodSandboxConfig, runtimeHandler string) (string, error) {
	// Twice the timeout, as the kubelet: a sandbox's network setup can be slow.
	resp, err := unary(ctx, 2*r.timeout, r.c.RunPodSandbox, &runtimeapi.RunPodSandboxRequest{Config: config, RuntimeHandler: runtimeHandler})
	if err != nil {
		return "", err
	}
	if resp.PodSandboxId == "" {
		return "", fmt.Errorf("PodSandboxId is not set for sandbox %q", config.GetMetadata())
	}
	return resp.PodSandboxId, nil
}

func (r *remoteRuntime) StopPodSandbox(ctx context.Context, id string) error {
	_, err := unary(ctx, r.timeout, r.c.StopPodSandbox, &runtimeapi.StopPodSandboxRequest{PodSandboxId: id})
	return err
}

func (r *remoteRuntime) RemovePodSandbox(ctx context.Context, id string) error {
	_, err := unary(ctx, r.timeout, r.c.RemovePodSandbox, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: id})
	return err
}

func (r *remoteRuntime) PodSandboxStatus(ctx context.Context, id string, verbose bool) (*runtimeapi.PodSandboxStatusResponse, error) {
	resp, err := unary(ctx, r.timeout, r.c.PodSandboxStatus, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: id, Verbose: verbose})
	if err != nil {
		return nil, err
	}
	if s := resp.Status; s != nil {
		m := s.Metadata
		switch {
		case s.Id == "":
			return nil, errors.New("status.Id is not set")
		case m == nil:
			return nil, errors.New("status.Metadata is not set")
		case m.Name == "" || m.Namespace == "" || m.Uid == "":
			return nil, fmt.Errorf("metadata.Name, metadata.Namespace or metadata.Uid is not in metadata %q", m)
		case s.CreatedAt == 0:
			return nil, errors.New("status.CreatedAt is not set")
		}
	}
	return resp, nil
}

func (r *remoteRuntime) ListPodSandbox(ctx context.Context, filter *runtimeapi.PodSandboxFilter) ([]*runtimeapi.PodSandbox, error) {
	resp, err := unary(ctx, r.timeout, r.c.ListPodSandbox, &runtimeapi.ListPodSandboxRequest{Filter: filter})
	return resp.GetItems(), err
}

func (r *remoteRuntime) PortForward(ctx context.Context, req *runtimeapi.PortForwardRequest) (*runtimeapi.PortForwardResponse, error) {
	resp, err := unary(ctx, r.timeout, r.c.PortForward, req)
	return withURL(resp, err)
}

func (r *remoteRuntime) UpdatePodSandboxResources(ctx context.Context, req *runtimeapi.UpdatePodSandboxResourcesRequest) (*runtimeapi.UpdatePodSandboxResourcesResponse, error) {
	return unary(ctx, r.timeout, r.c.UpdatePodSandboxResources, req)
}

func (r *remoteRuntime) CreateContainer(ctx context.Context, sandboxID string, config *runtimeapi.ContainerConfig, sandboxConfig *runtimeapi.PodSandboxConfig) (string, error) {
	resp, err := unary(ctx, r.timeout, r.c.CreateContainer, &runtimeapi.CreateContainerRequest{PodSandboxId: sandboxID, Config: config, SandboxConfig: sandboxConfig})
	if err != nil {
		return "", err
	}
	if resp.ContainerId == "" {
		return "", fmt.Errorf("ContainerId is not set for container %q", config.GetMetadata())
	}
	return resp.ContainerId, nil
}

func (r *remoteRuntime) StartContainer(ctx context.Context, id string) error {
	_, err := unary(ctx, r.timeout, r.c.StartContainer, &runtimeapi.StartContainerRequest{ContainerId: id})
	return err
}

func (r *remoteRuntime) StopContainer(ctx context.Context, id string, timeout int64) error {
	// The grace period on top of the timeout: the runtime waits for it before SIGKILL.
	_, err := unary(ctx, r.timeout+time.Duration(timeout)*time.Second, r.c.StopContainer, &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: timeout})
	return err
}

func (r *remoteRuntime) RemoveContainer(ctx context.Context, id string) error {
	_, err := unary(ctx, r.timeout, r.c.RemoveContainer, &runtimeapi.RemoveContainerRequest{ContainerId: id})
	return err
}

func (r *remoteRuntime) ListContainers(ctx context.Context, filter *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error) {
	resp, err := unary(ctx, r.timeout, r.c.ListContainers, &runtimeapi.ListContainersRequest{Filter: filter})
	return resp.GetContainers(), err
}

func (r *remoteRuntime) ContainerStatus(ctx context.Context, id string, verbose bool) (*runtimeapi.ContainerStatusResponse, error) {
	resp, err := unary(ctx, r.timeout, r.c.ContainerStatus, &runtimeapi.ContainerStatusRequest{ContainerId: id, Verbose: verbose})
	if err != nil {
		return nil, err
	}
	if s := resp.Status; s != nil {
		switch {
		case s.Id == "":
			return nil, errors.New("status.Id is not set")
		case s.Metadata == nil:
			return nil, errors.New("status.Metadata is not set")
		case s.Metadata.Name == "":
			return nil, fmt.Errorf("metadata.Name is not in metadata %q", s.Metadata)
		case s.CreatedAt == 0:
			return nil, errors.New("status.CreatedAt is not set")
		case s.Image.GetImage() == "":
			return nil, errors.New("status.Image is not set")
		case s.ImageRef == "":
			return nil, errors.New("status.ImageRef is not set")
		}
	}
	return resp, nil
}

func (r *remoteRuntime) UpdateContainerResources(ctx context.Context, id string, resources *runtimeapi.ContainerResources) error {
	_, err := unary(ctx, r.timeout, r.c.UpdateContainerResources, &runtimeapi.UpdateContainerResourcesRequest{ContainerId: id, Linux: resources.GetLinux(), Windows: resources.GetWindows()})
	return err
}

// ExecSync runs cmd; a non-zero exit is a utilexec.CodeExitError, a command that outlives
// timeout (0: none) an error wrapping context.DeadlineExceeded.
func (r *remoteRuntime) ExecSync(ctx context.Context, id string, cmd []string, timeout time.Duration) ([]byte, []byte, error) {
	if timeout != 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.timeout+timeout)
		defer cancel()
	}
	resp, err := r.c.ExecSync(ctx, &runtimeapi.ExecSyncRequest{ContainerId: id, Cmd: cmd, Timeout: int64(timeout.Seconds())})
	if status.Code(err) == codes.DeadlineExceeded {
		return nil, nil, fmt.Errorf("%w: %q timed out after %s", context.DeadlineExceeded, strings.Join(cmd, " "), timeout)
	}
	if err != nil {
		return nil, nil, err
	}
	if resp.ExitCode != 0 {
		err = utilexec.CodeExitError{Err: fmt.Errorf("command '%s' exited with %d: %s", strings.Join(cmd, " "), resp.ExitCode, resp.Stderr), Code: int(resp.ExitCode)}
	}
	return resp.Stdout, resp.Stderr, err
}

func (r *remoteRuntime) Exec(ctx context.Context, req *runtimeapi.ExecRequest) (*runtimeapi.ExecResponse, error) {
	resp, err := unary(ctx, r.timeout, r.c.Exec, req)
	return withURL(resp, err)
}

func (r *remoteRuntime) Attach(ctx context.Context, req *runtimeapi.AttachRequest) (*runtimeapi.AttachResponse, error) {
	resp, err := unary(ctx, r.timeout, r.c.Attach, req)
	return withURL(resp, err)
}

// withURL is a streaming call's answer, an error if it names no URL.
func withURL[Resp interface{ GetUrl() string }](resp Resp, err error) (Resp, error) {
	if err == nil && resp.GetUrl() == "" {
		err = errors.New("URL is not set")
	}
	if err != nil {
		var none Resp
		return none, err
	}
	return resp, nil
}

func (r *remoteRuntime) ReopenContainerLog(ctx context.Context, id string) error {
	_, err := unary(ctx, r.timeout, r.c.ReopenContainerLog, &runtimeapi.ReopenContainerLogRequest{ContainerId: id})
	return err
}

func (r *remoteRuntime) CheckpointContainer(ctx context.Context, req *runtimeapi.CheckpointContainerRequest) error {
	if req == nil || req.Timeout < 0 {
		return errors.New("CheckpointContainer needs a request with a timeout >= 0")
	}
	// The request's timeout if it is longer than the default one, else the default one.
	timeout := max(r.timeout, time.Duration(req.Timeout)*time.Second)
	req.Timeout = int64(timeout / time.Second)
	_, err := unary(ctx, timeout, r.c.CheckpointContainer, req)
	return err
}

// GetContainerEvents streams the runtime's container events to ch until the stream or ctx ends.
func (r *remoteRuntime) GetContainerEvents(ctx context.Context, ch chan *runtimeapi.ContainerEventResponse, established func(runtimeapi.RuntimeService_GetContainerEventsClient)) error {
	stream, err := r.c.GetContainerEvents(ctx, &runtimeapi.GetEventsRequest{})
	if err != nil {
		return err
	}
	if established != nil {
		established(stream)
	}
	for {
		resp, err := stream.Recv()
		if err != nil {
			return err
		}
		if resp != nil {
			ch <- resp
		}
	}
}

func (r *remoteRuntime) ContainerStats(ctx context.Context, id string) (*runtimeapi.ContainerStats, error) {
	resp, err := unary(ctx, r.timeout, r.c.ContainerStats, &runtimeapi.ContainerStatsRequest{ContainerId: id})
	return resp.GetStats(), err
}

func (r *remoteRuntime) ListContainerStats(ctx context.Context, filter *runtimeapi.ContainerStatsFilter) ([]*runtimeapi.ContainerStats, error) {
	resp, err := unary(ctx, r.timeout, r.c.ListContainerStats, &runtimeapi.ListContainerStatsRequest{Filter: filter})
	return resp.GetStats(), err
}

func (r *remoteRuntime) PodSandboxStats(ctx context.Context, id string) (*runtimeapi.PodSandboxStats, error) {
	resp, err := unary(ctx, r.timeout, r.c.PodSandboxStats, &runtimeapi.PodSandboxStatsRequest{PodSandboxId: id})
	return resp.GetStats(), err
}

func (r *remoteRuntime) ListPodSandboxStats(ctx context.Context, filter *runtimeapi.PodSandboxStatsFilter) ([]*runtimeapi.PodSandboxStats, error) {
	resp, err := unary(ctx, r.timeout, r.c.ListPodSandboxStats, &runtimeapi.ListPodSandboxStatsRequest{Filter: filter})
	return resp.GetStats(), err
}

func (r *remoteRuntime) ListMetricDescriptors(ctx context.Context) ([]*runtimeapi.MetricDescriptor, error) {
	resp, err := unary(ctx, r.timeout, r.c.ListMetricDescriptors, &runtimeapi.ListMetricDescriptorsRequest{})
	return resp.GetDescriptors(), err
}

func (r *remoteRuntime) ListPodSandboxMetrics(ctx context.Context) ([]*runtimeapi.PodSandboxMetrics, error) {
	resp, err := unary(ctx, r.timeout, r.c.ListPodSandboxMetrics, &runtimeapi.ListPodSandboxMetricsRequest{})
	return resp.GetPodMetrics(), err
}

// remoteImages is an internalapi.ImageManagerService over a connection to the image service.
type remoteImages struct {
	conn    *grpc.ClientConn
	c       runtimeapi.ImageServiceClient
	timeout time.Duration
	// sharedConn is the runtime service's connection, which its Close closes.
	sharedConn bool
}

var _ internalapi.ImageManagerService = (*remoteImages)(nil)

// newRemoteImages is an ImageManagerService at endpoint whose calls but pulls time out after
// timeout.
func newRemoteImages(endpoint string, timeout time.Duration) (*remoteImages, error) {
	conn, err := dialCRI(endpoint)
	if err != nil {
		return nil, err
	}
	return &remoteImages{conn: conn, c: runtimeapi.NewImageServiceClient(conn), timeout: timeout}, nil
}

// images is the image service on the runtime's own connection, for a runtime that serves
// both on one socket (cri-client dialled it twice: another HTTP/2 connection, its buffers
// and goroutines, for nothing).
func (r *remoteRuntime) images() *remoteImages {
	return &remoteImages{conn: r.conn, c: runtimeapi.NewImageServiceClient(r.conn), timeout: r.timeout, sharedConn: true}
}

func (s *remoteImages) Close(context.Context) error {
	if s.sharedConn {
		return nil
	}
	return s.conn.Close()
}

func (s *remoteImages) ListImages(ctx context.Context, filter *runtimeapi.ImageFilter) ([]*runtimeapi.Image, error) {
	resp, err := unary(ctx, s.timeout, s.c.ListImages, &runtimeapi.ListImagesRequest{Filter: filter})
	return resp.GetImages(), err
}

func (s *remoteImages) ImageStatus(ctx context.Context, image *runtimeapi.ImageSpec, verbose bool) (*runtimeapi.ImageStatusResponse, error) {
	resp, err := unary(ctx, s.timeout, s.c.ImageStatus, &runtimeapi.ImageStatusRequest{Image: image, Verbose: verbose})
	if err != nil {
		return nil, err
	}
	if resp.Image != nil && (resp.Image.Id == "" || resp.Image.Size == 0) {
		return nil, fmt.Errorf("Id or size of image %q is not set", image.GetImage())
	}
	return resp, nil
}

// PullImage pulls without a timeout (a large image takes as long as it takes); an error of
// code Unknown is only its message, which the pod's status shows.
func (s *remoteImages) PullImage(ctx context.Context, image *runtimeapi.ImageSpec, auth *runtimeapi.AuthConfig, sandboxConfig *runtimeapi.PodSandboxConfig) (string, error) {
	resp, err := s.c.PullImage(ctx, &runtimeapi.PullImageRequest{Image: image, Auth: auth, SandboxConfig: sandboxConfig})
	if st, ok := status.FromError(err); ok && err != nil && st.Code() == codes.Unknown {
		return "", errors.New(st.Message())
	}
	if err != nil {
		return "", err
	}
	if resp.ImageRef == "" {
		return "", fmt.Errorf("imageRef of image %q is not set", image.GetImage())
	}
	return resp.ImageRef, nil
}

func (s *remoteImages) RemoveImage(ctx context.Context, image *runtimeapi.ImageSpec) error {
	_, err := unary(ctx, s.timeout, s.c.RemoveImage, &runtimeapi.RemoveImageRequest{Image: image})
	return err
}

func (s *remoteImages) ImageFsInfo(ctx context.Context) (*runtimeapi.ImageFsInfoResponse, error) {
	return unary(ctx, s.timeout, s.c.ImageFsInfo, &runtimeapi.ImageFsInfoRequest{})
}
