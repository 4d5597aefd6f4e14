package mock

import (
	"context"
	"fmt"
	"io"
	"math"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/podutil"
	"github.com/vk-static/vk-static/provider"
)

var _ provider.ContainerLogsHandler = (*Provider)(nil)

// A simulated container has no output of its own, so its log is what the simulator did to it:
// one line per event, timed by the provider's clock, written when the pod's status changes
// (recordLocked compares the old status with the new one, so the log cannot disagree with it).
// An instance of a container (its life between two restarts) has at most five events —
// created or restarted, started, stopping, stopped or replaced — and a container keeps only its
// current and previous instances, so the logs are bounded without a line limit.

// logEvent is what happened to a container instance.
type logEvent uint8

const (
	evCreated   logEvent = iota // the pod was accepted; image
	evRestarted                 // a new instance after a restart; image, n = restart count
	evStarted                   // it runs
	evStopping                  // the pod is being deleted; n = grace period in seconds
	evStopped                   // it exited; n = exit code, reason
	evReplaced                  // it was stopped to restart with image (UpdatePod)
)

// logLine is one event. The text is formatted when read: most lines are never read, and the
// scale benchmarks create pods by the thousand.
type logLine struct {
	at   int64 // lineTime: 16 B a line less than a time.Time (32 B a running container)
	kind logEvent
	n    int64
	arg  string // the image (created, restarted, replaced) or the reason (stopped): one field, 16 B a line less
}

// lineTime is t as a line keeps it: in nanoseconds since the epoch, the zero time as
// math.MinInt64 (far before any time the nanoseconds can hold).
func lineTime(t time.Time) int64 {
	if t.IsZero() {
		return math.MinInt64
	}
	return t.UnixNano()
}

// time is when the line's event happened.
func (l *logLine) time() time.Time {
	if l.at == math.MinInt64 {
		return time.Time{}
	}
	return time.Unix(0, l.at)
}

func (l *logLine) text(container string) string {
	switch l.kind {
	case evCreated:
		return fmt.Sprintf("mock: created container %s (image %s)", container, l.arg)
	case evRestarted:
		return fmt.Sprintf("mock: restarted container %s (restart %d, image %s)", container, l.n, l.arg)
	case evStarted:
		return fmt.Sprintf("mock: started container %s", container)
	case evStopping:
		return fmt.Sprintf("mock: stopping container %s (pod deleted, grace period %ds)", container, l.n)
	case evStopped:
		return fmt.Sprintf("mock: stopped container %s: exit code %d (%s)", container, l.n, l.arg)
	case evReplaced:
		return fmt.Sprintf("mock: stopped container %s to restart it with image %s", container, l.arg)
	}
	return "mock: unknown event " + strconv.Itoa(int(l.kind))
}

// instanceLog is the log of one container instance. Guarded by Provider.mu; lines are only
// appended, so a reader may read the lines it saw under the lock after releasing it.
type instanceLog struct {
	lines []logLine
	ended bool
	// changed is closed (and cleared) at the next line or the end; done is closed at the end.
	// Both are made only when someone waits: most instances are never followed or attached to.
	changed chan struct{}
	done    chan struct{}
}

// newInstanceLog is an instance's log with room for its first two lines (created or restarted,
// started): a running container's whole log, allocated once.
func newInstanceLog() *instanceLog {
	return &instanceLog{lines: make([]logLine, 0, 2)}
}

func (l *instanceLog) appendLocked(line logLine) {
	if l.ended {
		return
	}
	l.lines = append(l.lines, line)
	l.wakeLocked()
}

func (l *instanceLog) endLocked() {
	if l.ended {
		return
	}
	l.ended = true
	if l.done != nil {
		close(l.done)
	}
	l.wakeLocked()
}

func (l *instanceLog) wakeLocked() {
	if l.changed != nil {
		close(l.changed)
		l.changed = nil
	}
}

// changedLocked returns a channel closed at the next line or the end of the instance.
func (l *instanceLog) changedLocked() <-chan struct{} {
	if l.changed == nil {
		l.changed = make(chan struct{})
	}
	return l.changed
}

// doneLocked returns a channel closed when the instance ends (already closed if it has).
func (l *instanceLog) doneLocked() <-chan struct{} {
	if l.done == nil {
		l.done = make(chan struct{})
		if l.ended {
			close(l.done)
		}
	}
	return l.done
}

// containerLog is a container's current instance and the one before its last restart.
type containerLog struct {
	name              string
	current, previous *instanceLog
}

// logLocked returns the log of the pod's container name, nil if it has none. A pod has a few
// containers: a slice searched is smaller than a map (about 200 B a pod at api-1k) and as fast.
func (e *podEntry) logLocked(name string) *containerLog {
	for i := range e.logs {
		if e.logs[i].name == name {
			return &e.logs[i]
		}
	}
	return nil
}

// recordLocked writes the log lines for the pod's change from old (nil for a new pod) to pod.
func (e *podEntry) recordLocked(old *podRecord, pod *corev1.Pod, now time.Time) {
	if e.logs == nil {
		e.logs = make([]containerLog, 0, len(pod.Status.InitContainerStatuses)+len(pod.Status.ContainerStatuses))
	}
	c := podChange{
		now:      now,
		deleting: pod.DeletionTimestamp != nil,
		stopping: pod.DeletionTimestamp != nil && (old == nil || old.deletionTimestamp == nil),
		grace:    int64(podutil.GracePeriod(pod) / time.Second),
	}
	var oldInit, oldMain []corev1.ContainerStatus
	if old != nil {
		oldInit, oldMain = old.status.initContainerStatuses, old.status.containerStatuses
	}
	for i := range pod.Status.InitContainerStatuses {
		cs := &pod.Status.InitContainerStatuses[i]
		e.recordContainerLocked(findStatus(oldInit, cs.Name), cs, c)
	}
	for i := range pod.Status.ContainerStatuses {
		cs := &pod.Status.ContainerStatuses[i]
		e.recordContainerLocked(findStatus(oldMain, cs.Name), cs, c)
	}
}

// podChange is what recordLocked knows about a pod's change beyond each container's status.
type podChange struct {
	now      time.Time
	deleting bool  // the pod is being deleted
	stopping bool  // ... since this change
	grace    int64 // its grace period, in seconds
}

func findStatus(statuses []corev1.ContainerStatus, name string) *corev1.ContainerStatus {
	for i := range statuses {
		if statuses[i].Name == name {
			return &statuses[i]
		}
	}
	return nil
}

// recordContainerLocked writes the lines for one container whose status was prev (nil if it
// had none) and is now cs.
func (e *podEntry) recordContainerLocked(prev, cs *corev1.ContainerStatus, c podChange) {
	cl := e.logLocked(cs.Name)
	if cl == nil {
		// Appended only here, and no *containerLog is kept past the lock: one taken before an
		// append that moves the slice is not used after it.
		e.logs = append(e.logs, containerLog{name: cs.Name})
		cl = &e.logs[len(e.logs)-1]
	}
	var was corev1.ContainerState // the state of the current instance before this change
	switch {
	case prev == nil || cl.current == nil:
		cl.current = newInstanceLog()
		cl.current.appendLocked(logLine{at: lineTime(c.now), kind: evCreated, arg: cs.Image})
	case prev.State.Running != nil && cs.RestartCount > prev.RestartCount:
		cl.current.appendLocked(logLine{at: lineTime(c.now), kind: evReplaced, arg: cs.Image})
		cl.current.endLocked()
		cl.previous, cl.current = cl.current, newInstanceLog()
		cl.current.appendLocked(logLine{at: lineTime(c.now), kind: evRestarted, n: int64(cs.RestartCount), arg: cs.Image})
	default:
		was = prev.State
	}
	inst := cl.current
	if c.stopping && was.Running != nil {
		inst.appendLocked(logLine{at: lineTime(c.now), kind: evStopping, n: c.grace})
	}
	if was.Running == nil && was.Terminated == nil {
		// A container that ends without having run (its pod deleted while it was being
		// created) has no start; an init container that completed at once has.
		if r := cs.State.Running; r != nil {
			inst.appendLocked(logLine{at: lineTime(r.StartedAt.Time), kind: evStarted})
		} else if t := cs.State.Terminated; t != nil && !c.deleting {
			inst.appendLocked(logLine{at: lineTime(t.StartedAt.Time), kind: evStarted})
		}
	}
	if t := cs.State.Terminated; t != nil && was.Terminated == nil {
		inst.appendLocked(logLine{at: lineTime(t.FinishedAt.Time), kind: evStopped, n: int64(t.ExitCode), arg: t.Reason})
		inst.endLocked()
	}
}

// GetContainerLogs returns the container's simulated log (see the package documentation).
// With opts.Follow the reader waits for the container's next events until it terminates or ctx
// ends; it starts no goroutine, so a reader that is dropped without Close leaks nothing.
func (p *Provider) GetContainerLogs(ctx context.Context, namespace, podName, containerName string, opts provider.ContainerLogOpts) (io.ReadCloser, error) {
	now := p.cfg.Clock.Now()
	since := opts.SinceTime
	if opts.SinceSeconds > 0 {
		if s := now.Add(-time.Duration(opts.SinceSeconds) * time.Second); s.After(since) {
			since = s
		}
	}

	p.mu.Lock()
	defer p.mu.Unlock()
	e, ok := p.pods[podKey{namespace: namespace, name: podName}]
	if !ok {
		return nil, provider.NotFound("mock: pod %s/%s", namespace, podName)
	}
	cl := e.logLocked(containerName)
	if cl == nil {
		return nil, provider.NotFound("mock: container %s in pod %s/%s", containerName, namespace, podName)
	}
	inst := cl.current
	if opts.Previous {
		if inst = cl.previous; inst == nil {
			return nil, provider.NotFound("mock: previous instance of container %s in pod %s/%s (it has not restarted)", containerName, namespace, podName)
		}
	}
	start := 0
	for start < len(inst.lines) && inst.lines[start].time().Before(since) {
		start++
	}
	if opts.Tail > 0 {
		start = max(start, len(inst.lines)-opts.Tail)
	}
	r := &logReader{
		p: p, inst: inst, container: containerName, next: start, since: since,
		timestamps: opts.Timestamps, follow: opts.Follow, remaining: -1,
		ctx: ctx, closed: make(chan struct{}),
	}
	if opts.LimitBytes > 0 {
		r.remaining = opts.LimitBytes
	}
	return r, nil
}

// logReader streams an instance's lines. It is not safe for concurrent Reads (no reader is),
// but Close may be called while a Read waits.
type logReader struct {
	p          *Provider
	inst       *instanceLog
	container  string
	next       int // index of the next line to read
	since      time.Time
	timestamps bool
	follow     bool
	remaining  int64 // bytes left before LimitBytes; negative: no limit
	ctx        context.Context

	buf       []byte // formatted, not yet read
	closeOnce sync.Once
	closed    chan struct{}
}

func (r *logReader) Read(b []byte) (int, error) {
	if r.remaining == 0 {
		return 0, io.EOF // LimitBytes reached
	}
	for len(r.buf) == 0 {
		select {
		case <-r.closed:
			return 0, io.ErrClosedPipe
		default:
		}
		r.p.mu.Lock()
		lines := r.inst.lines[r.next:]
		r.next = len(r.inst.lines)
		ended := r.inst.ended
		var changed <-chan struct{}
		if len(lines) == 0 && r.follow && !ended {
			changed = r.inst.changedLocked()
		}
		r.p.mu.Unlock()

		for i := range lines {
			r.format(&lines[i])
		}
		switch {
		case len(r.buf) > 0:
		case len(lines) > 0:
			// Every new line was older than since: look again.
		case changed == nil:
			return 0, io.EOF
		default:
			select {
			case <-changed:
			case <-r.ctx.Done():
				return 0, r.ctx.Err()
			case <-r.closed:
				return 0, io.ErrClosedPipe
			}
		}
	}
	n := len(b)
	if r.remaining >= 0 && int64(n) > r.remaining {
		n = int(r.remaining)
	}
	n = copy(b[:n], r.buf)
	r.buf = r.buf[n:]
	if r.remaining > 0 {
		r.remaining -= int64(n)
	}
	return n, nil
}

func (r *logReader) format(l *logLine) {
	if l.time().Before(r.since) {
		return
	}
	if r.timestamps {
		r.buf = l.time().UTC().AppendFormat(r.buf, time.RFC3339Nano)
		r.buf = append(r.buf, ' ')
	}
	r.buf = append(r.buf, l.text(r.container)...)
	r.buf = append(r.buf, '\n')
}

// Close ends the stream; a Read waiting for lines returns at once.
func (r *logReader) Close() error {
	r.closeOnce.Do(func() { close(r.closed) })
	return nil
}
