package lifecycle

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// The plan is the lifecycle's decision, made from the pod's state alone: these cases read as
// "given these containers in these states, start these, kill those, wake then".
func TestPlanPod(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 7, 0, 0, 0, time.UTC)
	sidecar := ctr("proxy", "sleep")
	sidecar.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
	running := func(attempt uint32) *containerRecord {
		return &containerRecord{current: &ContainerStatus{ID: "x", State: ContainerRunning, Attempt: attempt, StartedAt: t0}, everStarted: true, started: true}
	}
	exited := func(code int32, ranFor, backoff time.Duration) *containerRecord {
		return &containerRecord{
			current:     &ContainerStatus{ID: "x", State: ContainerExited, ExitCode: code, StartedAt: t0.Add(-ranFor), FinishedAt: t0},
			everStarted: true, backoff: backoff,
		}
	}
	for _, tc := range []struct {
		name       string
		restart    corev1.RestartPolicy
		inits      []corev1.Container
		containers []corev1.Container
		state      map[string]*containerRecord
		waiting    map[string]waitingReason
		now        time.Time
		start      []string
		kill       []string
		wake       time.Time
		initFailed bool
	}{
		{name: "a new pod starts its first init container only",
			inits: []corev1.Container{ctr("a", "x"), ctr("b", "x")}, containers: []corev1.Container{ctr("main", "x")},
			start: []string{"a"}},
		{name: "an init container that exited 0 lets the next start",
			inits: []corev1.Container{ctr("a", "x"), ctr("b", "x")}, containers: []corev1.Container{ctr("main", "x")},
			state: map[string]*containerRecord{"a": exited(0, time.Second, 0)}, start: []string{"b"}},
		{name: "a running init container holds up everything after it",
			inits: []corev1.Container{ctr("a", "x")}, containers: []corev1.Container{ctr("main", "x")},
			state: map[string]*containerRecord{"a": running(0)}},
		{name: "a sidecar that has started lets the main containers start, all at once",
			inits: []corev1.Container{sidecar}, containers: []corev1.Container{ctr("m1", "x"), ctr("m2", "x")},
			state: map[string]*containerRecord{"proxy": running(0)}, start: []string{"m1", "m2"}},
		{name: "a failed init container with restartPolicy Never fails the pod and stops its sidecars",
			restart: corev1.RestartPolicyNever,
			inits:   []corev1.Container{sidecar, ctr("a", "x")}, containers: []corev1.Container{ctr("main", "x")},
			state:      map[string]*containerRecord{"proxy": running(0), "a": exited(1, time.Second, 0)},
			kill:       []string{"proxy"},
			initFailed: true},
		{name: "the first restart is immediate",
			containers: []corev1.Container{ctr("main", "x")},
			state:      map[string]*containerRecord{"main": exited(1, time.Second, 0)}, now: t0, start: []string{"main"}},
		{name: "a later restart waits for its back-off from the exit",
			containers: []corev1.Container{ctr("main", "x")},
			state:      map[string]*containerRecord{"main": exited(1, time.Second, 20*time.Second)}, now: t0.Add(5 * time.Second),
			wake: t0.Add(20 * time.Second)},
		{name: "a container that ran ten minutes restarts at once",
			containers: []corev1.Container{ctr("main", "x")},
			state:      map[string]*containerRecord{"main": exited(1, 10*time.Minute, 5*time.Minute)}, now: t0, start: []string{"main"}},
		{name: "OnFailure does not restart a success, and the finished pod stops its sidecars",
			restart: corev1.RestartPolicyOnFailure, inits: []corev1.Container{sidecar}, containers: []corev1.Container{ctr("main", "x")},
			state: map[string]*containerRecord{"proxy": running(0), "main": exited(0, time.Second, 0)}, kill: []string{"proxy"}},
		{name: "a failed liveness probe kills the container",
			containers: []corev1.Container{ctr("main", "x")},
			state: map[string]*containerRecord{"main": func() *containerRecord {
				r := running(0)
				r.unhealthy = true
				return r
			}()}, kill: []string{"main"}},
		{name: "a container that can never run is not tried again, and the pod never finishes",
			restart: corev1.RestartPolicyNever, containers: []corev1.Container{ctr("main", "x"), ctr("done", "x")},
			state:   map[string]*containerRecord{"done": exited(0, time.Second, 0)},
			waiting: map[string]waitingReason{"main": {reason: reasonNoCommand, final: true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := testPod("u", tc.restart, tc.containers...)
			if tc.restart == "" {
				pod.Spec.RestartPolicy = corev1.RestartPolicyAlways
			}
			pod.Spec.InitContainers = tc.inits
			st := &podState{pod: pod, containers: tc.state, waiting: tc.waiting}
			if st.containers == nil {
				st.containers = map[string]*containerRecord{}
			}
			pl := planPod(st, tc.now)
			var start, kill []string
			for _, c := range pl.start {
				start = append(start, c.Name)
			}
			for _, k := range pl.kill {
				kill = append(kill, k.name)
			}
			assert.Equal(t, tc.start, start, "start")
			assert.Equal(t, tc.kill, kill, "kill")
			assert.Equal(t, tc.wake, pl.wakeAt, "wake")
			assert.Equal(t, tc.initFailed, pl.initFailed, "initFailed")
		})
	}
}
