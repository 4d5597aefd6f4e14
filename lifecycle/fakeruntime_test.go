package lifecycle

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/clock"
	utilexec "k8s.io/utils/exec"

	"github.com/vk-static/vk-static/lifecycle/dns"
	"github.com/vk-static/vk-static/provider"
)

// fakeRuntime is a Runtime whose containers are records: a test ends them with exit and reads
// what the lifecycle asked for with calls.
type fakeRuntime struct {
	clock clock.PassiveClock

	mu         sync.Mutex
	sandboxes  map[string]*SandboxStatus
	containers map[string]*fakeContainer
	nextID     int
	cb         func(ContainerEvent)
	log        []string
	refuse     string // Admit's answer, "" to admit
	podIP      string // the address of sandboxes not on the host's network; "" for none
	// execExit is the exit code of an exec whose command is the key (joined by spaces); 0 for
	// others.
	execExit map[string]int
	// removeFailures is how many more RemoveContainer calls fail (a runtime that cannot remove
	// a container yet); removeCalls counts every call.
	removeFailures int
	removeCalls    int
	// listSandboxFailures and removeSandboxFailures are how many more ListSandboxes and
	// RemoveSandbox calls fail.
	listSandboxFailures   int
	removeSandboxFailures int
	// stopHold, when set, keeps every StopContainer from returning (its container running)
	// until it is closed: a container slow to stop.
	stopHold chan struct{}
	// statusCalls counts ContainerStatus calls by container name.
	statusCalls map[string]int
	// sandboxDNS is the DNS each sandbox was run with, by pod name.
	sandboxDNS map[string]*dns.Config
	// sandboxHandlers are the runtime handlers the pod's sandboxes were run with, by pod name.
	sandboxHandlers map[string][]string
}

type fakeContainer struct {
	status ContainerStatus
	cfg    *ContainerConfig
}

func newFakeRuntime(c clock.PassiveClock) *fakeRuntime {
	return &fakeRuntime{clock: c, sandboxes: map[string]*SandboxStatus{}, containers: map[string]*fakeContainer{}, statusCalls: map[string]int{}}
}

func (f *fakeRuntime) record(format string, args ...any) {
	f.log = append(f.log, fmt.Sprintf(format, args...))
}

// statusCallsOf is how many times the named container's status was asked for.
func (f *fakeRuntime) statusCallsOf(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.statusCalls[name]
}

// calls returns the calls made so far ("start web#0", "stop web#1").
func (f *fakeRuntime) calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.log)
}

func (f *fakeRuntime) Admit(*corev1.Pod) error {
	if f.refuse != "" {
		return fmt.Errorf("%s", f.refuse)
	}
	return nil
}

func (f *fakeRuntime) RunSandbox(_ context.Context, cfg *SandboxConfig) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	id := fmt.Sprintf("sb%d", f.nextID)
	f.sandboxes[id] = &SandboxStatus{ID: id, PodUID: cfg.PodUID, Namespace: cfg.Namespace, Name: cfg.Name, Labels: cfg.Labels, CreatedAt: f.clock.Now()}
	if f.sandboxDNS == nil {
		f.sandboxDNS = map[string]*dns.Config{}
	}
	f.sandboxDNS[cfg.Name] = cfg.DNS
	if f.sandboxHandlers == nil {
		f.sandboxHandlers = map[string][]string{}
	}
	f.sandboxHandlers[cfg.Name] = append(f.sandboxHandlers[cfg.Name], cfg.RuntimeHandler)
	if f.podIP != "" && !cfg.HostNetwork {
		f.sandboxes[id].IPs = []string{f.podIP}
	}
	return id, nil
}

func (f *fakeRuntime) StopSandbox(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if sb, ok := f.sandboxes[id]; ok {
		sb.State = SandboxNotReady
	}
	return nil
}

func (f *fakeRuntime) RemoveSandbox(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.removeSandboxFailures > 0 {
		f.removeSandboxFailures--
		return fmt.Errorf("sandbox %s: the runtime cannot remove it yet", id)
	}
	delete(f.sandboxes, id)
	return nil
}

func (f *fakeRuntime) ListSandboxes(context.Context) ([]*SandboxStatus, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.listSandboxFailures > 0 {
		f.listSandboxFailures--
		return nil, fmt.Errorf("the runtime cannot list its sandboxes now")
	}
	var out []*SandboxStatus
	for _, sb := range f.sandboxes {
		c := *sb
		out = append(out, &c)
	}
	return out, nil
}

func (f *fakeRuntime) CreateContainer(_ context.Context, sandboxID string, cfg *ContainerConfig) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	id := fmt.Sprintf("c%d", f.nextID)
	f.containers[id] = &fakeContainer{cfg: cfg, status: ContainerStatus{
		ID: id, SandboxID: sandboxID, Name: cfg.Name, Attempt: cfg.Attempt, State: ContainerCreated,
		CreatedAt: f.clock.Now(), LogPath: cfg.LogPath, ImageRef: cfg.ImageRef, Labels: cfg.Labels,
	}}
	return id, nil
}

// StartContainer runs the container; a command named "missing" fails as a missing executable.
func (f *fakeRuntime) StartContainer(_ context.Context, id string) error {
	f.mu.Lock()
	c, ok := f.containers[id]
	if !ok {
		f.mu.Unlock()
		return provider.NotFound("container %s", id)
	}
	f.record("start %s#%d", c.cfg.Name, c.cfg.Attempt)
	now := f.clock.Now()
	var err error
	if len(c.cfg.Command) > 0 && c.cfg.Command[0] == "missing" {
		err = fmt.Errorf(`exec: "missing": executable file not found in $PATH`)
		c.status.State, c.status.ExitCode, c.status.Reason, c.status.Message, c.status.FinishedAt = ContainerExited, 128, "StartError", err.Error(), now
	} else {
		c.status.State, c.status.StartedAt = ContainerRunning, now
	}
	cb, labels := f.cb, c.status.Labels
	f.mu.Unlock()
	if cb != nil {
		cb(ContainerEvent{ContainerID: id, Type: ContainerStartedEvent, Labels: labels})
	}
	return err
}

// StopContainer ends a running container with 143, as a process that obeys SIGTERM.
func (f *fakeRuntime) StopContainer(_ context.Context, id string, grace time.Duration) error {
	f.mu.Lock()
	c, ok := f.containers[id]
	if ok {
		f.record("stop %s#%d grace=%s", c.cfg.Name, c.cfg.Attempt, grace)
	}
	hold := f.stopHold
	f.mu.Unlock()
	if !ok {
		return provider.NotFound("container %s", id)
	}
	if hold != nil {
		<-hold
	}
	f.exit(id, 143)
	return nil
}

// exit ends a running container with code and reports it.
func (f *fakeRuntime) exit(id string, code int32) {
	f.mu.Lock()
	c, ok := f.containers[id]
	if !ok || c.status.State != ContainerRunning {
		f.mu.Unlock()
		return
	}
	c.status.State, c.status.ExitCode, c.status.FinishedAt = ContainerExited, code, f.clock.Now()
	cb, labels := f.cb, c.status.Labels
	f.mu.Unlock()
	if cb != nil {
		cb(ContainerEvent{ContainerID: id, Type: ContainerExitedEvent, Labels: labels})
	}
}

// running returns the ID of the running instance of the named container, "" for none.
func (f *fakeRuntime) running(name string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	for id, c := range f.containers {
		if c.cfg.Name == name && c.status.State == ContainerRunning {
			return id
		}
	}
	return ""
}

func (f *fakeRuntime) RemoveContainer(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.removeCalls++
	if f.removeFailures > 0 {
		f.removeFailures--
		return fmt.Errorf("container %s: the runtime cannot remove it yet", id)
	}
	if _, ok := f.containers[id]; !ok {
		return provider.NotFound("container %s", id)
	}
	delete(f.containers, id)
	return nil
}

func (f *fakeRuntime) ContainerStatus(_ context.Context, id string) (*ContainerStatus, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.containers[id]
	if !ok {
		return nil, provider.NotFound("container %s", id)
	}
	f.statusCalls[c.cfg.Name]++
	s := c.status
	return &s, nil
}

func (f *fakeRuntime) ListContainers(context.Context) ([]*ContainerStatus, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*ContainerStatus
	for _, c := range f.containers {
		s := c.status
		out = append(out, &s)
	}
	return out, nil
}

func (f *fakeRuntime) NotifyContainers(_ context.Context, cb func(ContainerEvent)) {
	f.mu.Lock()
	f.cb = cb
	f.mu.Unlock()
}

func (f *fakeRuntime) Exec(_ context.Context, id string, cmd []string, _ provider.AttachIO) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c, ok := f.containers[id]; !ok || c.status.State != ContainerRunning {
		return fmt.Errorf("container %s is not running", id)
	}
	if code := f.execExit[strings.Join(cmd, " ")]; code != 0 {
		return utilexec.CodeExitError{Err: fmt.Errorf("exit %d", code), Code: code}
	}
	return nil
}
func (f *fakeRuntime) Attach(context.Context, string, provider.AttachIO) error { return nil }
func (f *fakeRuntime) PortForward(context.Context, string, int32, io.ReadWriteCloser) error {
	return nil
}
func (f *fakeRuntime) ContainerStats(_ context.Context, id string) (*ContainerStats, error) {
	return &ContainerStats{Timestamp: f.clock.Now(), CPUUsageCoreNanoSeconds: 1000, MemoryWorkingSetBytes: 4096}, nil
}

// config is the config the newest instance of container name was created with.
func (f *fakeRuntime) config(name string) *ContainerConfig {
	f.mu.Lock()
	defer f.mu.Unlock()
	var newest *fakeContainer
	for _, c := range f.containers {
		if c.cfg.Name == name && (newest == nil || c.cfg.Attempt > newest.cfg.Attempt) {
			newest = c
		}
	}
	if newest == nil {
		return nil
	}
	return newest.cfg
}

// fakeObjects is a nodeobjects.ObjectGetter over maps; a missing object is NotFound.
type fakeObjects struct {
	configMaps map[string]*corev1.ConfigMap
	secrets    map[string]*corev1.Secret
}

func (f *fakeObjects) GetConfigMap(_ context.Context, _, name string) (*corev1.ConfigMap, error) {
	if cm, ok := f.configMaps[name]; ok {
		return cm, nil
	}
	return nil, apierrors.NewNotFound(corev1.Resource("configmaps"), name)
}

func (f *fakeObjects) GetSecret(_ context.Context, _, name string) (*corev1.Secret, error) {
	if s, ok := f.secrets[name]; ok {
		return s, nil
	}
	return nil, apierrors.NewNotFound(corev1.Resource("secrets"), name)
}

// AdmitEphemeral runs every ephemeral container, as CRI's runtime does.
func (f *fakeRuntime) AdmitEphemeral(*corev1.Pod, *corev1.EphemeralContainer, string) error {
	return nil
}
