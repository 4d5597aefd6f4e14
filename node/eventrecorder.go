package node

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/reference"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/vk-static/vk-static/kubeclient"
)

// Defaults for EventRecorder.
const (
	DefaultEventQueueSize = 10000
	DefaultEventWorkers   = 8
)

// EventRecorder is a record.EventRecorder that posts events through a bounded queue drained by
// several workers. client-go's broadcaster posts from one goroutine and drops beyond 1000
// queued events: at 10,000 pods starting, most Started events — which startup-latency tools
// read — were lost (docs/performance.md, bottleneck 7). Events that still do not fit are
// counted (vk_static_events_dropped_total), never blocking the caller. Events are not
// aggregated: the agent reports each distinct problem once.
type EventRecorder struct {
	events  EventClient
	scheme  *runtime.Scheme // kubeclient's: resolves the kinds of the objects events are about
	source  corev1.EventSource
	queue   chan *corev1.Event
	workers int
	clock   clock.PassiveClock
	metrics *Metrics
	backlog *StatusBacklog // nil: events are not held back
	// logger is Run's, for record: record.EventRecorder's methods take no context. Nil before
	// Run; what record would log then (an object it cannot refer to, a programming error) recurs
	// with every event about such an object, so it is seen once Run has started.
	logger atomic.Pointer[klog.Logger]
}

// EventRecorderOptions tune NewEventRecorder; zero values take the defaults.
type EventRecorderOptions struct {
	QueueSize, Workers int
	Clock              clock.PassiveClock
	Metrics            *Metrics
	// Backlog, when set, holds each event back while pod status writes are queued or in
	// flight (StatusBacklog); the pod controller must report to the same one.
	Backlog *StatusBacklog
}

// EventClient is what EventRecorder posts through: kubeclient.Interface has it.
type EventClient interface {
	Events(namespace string) kubeclient.EventInterface
	// CoreRESTClient, when a *rest.RESTClient, posts events without reading the answer.
	CoreRESTClient() rest.Interface
}

// NewEventRecorder returns a recorder that posts through events (a client with its own rate
// limit, so events never take the status writes' budget); Run starts its workers.
func NewEventRecorder(events EventClient, source corev1.EventSource, opts EventRecorderOptions) *EventRecorder {
	if opts.QueueSize <= 0 {
		opts.QueueSize = DefaultEventQueueSize
	}
	if opts.Workers <= 0 {
		opts.Workers = DefaultEventWorkers
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	return &EventRecorder{
		events: events, scheme: kubeclient.NewScheme(), source: source, queue: make(chan *corev1.Event, opts.QueueSize),
		workers: opts.Workers, clock: opts.Clock, metrics: opts.Metrics, backlog: opts.Backlog,
	}
}

// Run posts queued events until ctx is cancelled; events still queued then are dropped.
func (r *EventRecorder) Run(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	r.logger.Store(&logger)
	var wg sync.WaitGroup
	for i := 0; i < r.workers; i++ {
		wg.Go(func() {
			for {
				select {
				case <-ctx.Done():
					return
				case ev := <-r.queue:
					r.backlog.Wait(ctx)
					if err := r.post(ctx, ev); err != nil && ctx.Err() == nil {
						logger.V(2).Info("Could not record event", "reason", ev.Reason, "object", ev.InvolvedObject.Name, "err", err)
					}
				}
			}
		})
	}
	wg.Wait()
	return nil
}

// post creates ev. Through a real REST client the API server's answer (the event's metadata,
// kubeclient.SendDroppingAnswer) is neither decoded nor read: nothing reads it
// (docs/performance.md, "Closing the gaps to the floor").
func (r *EventRecorder) post(ctx context.Context, ev *corev1.Event) error {
	if rc, ok := r.events.CoreRESTClient().(*rest.RESTClient); ok && rc != nil {
		return kubeclient.SendDroppingAnswer(ctx, rc.Post().Namespace(ev.Namespace).Resource("events").Body(ev))
	}
	_, err := r.events.Events(ev.Namespace).Create(ctx, ev, metav1.CreateOptions{})
	return err
}

// Event implements record.EventRecorder.
func (r *EventRecorder) Event(obj runtime.Object, eventtype, reason, message string) {
	r.record(obj, nil, eventtype, reason, message)
}

// Eventf implements record.EventRecorder.
func (r *EventRecorder) Eventf(obj runtime.Object, eventtype, reason, messageFmt string, args ...any) {
	r.record(obj, nil, eventtype, reason, fmt.Sprintf(messageFmt, args...))
}

// AnnotatedEventf implements record.EventRecorder.
func (r *EventRecorder) AnnotatedEventf(obj runtime.Object, annotations map[string]string, eventtype, reason, messageFmt string, args ...any) {
	r.record(obj, annotations, eventtype, reason, fmt.Sprintf(messageFmt, args...))
}

func (r *EventRecorder) record(obj runtime.Object, annotations map[string]string, eventtype, reason, message string) {
	ref, err := reference.GetReference(r.scheme, obj)
	if err != nil {
		if logger := r.logger.Load(); logger != nil {
			logger.V(2).Info("Cannot refer to the object of an event", "reason", reason, "err", err)
		}
		return
	}
	now := metav1.NewTime(r.clock.Now())
	namespace := ref.Namespace
	if namespace == "" {
		namespace = metav1.NamespaceDefault // cluster-scoped objects (the Node), as the kubelet does
	}
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{
			Name:        fmt.Sprintf("%v.%x", ref.Name, now.UnixNano()),
			Namespace:   namespace,
			Annotations: annotations,
		},
		InvolvedObject:      *ref,
		Reason:              reason,
		Message:             message,
		FirstTimestamp:      now,
		LastTimestamp:       now,
		Count:               1,
		Type:                eventtype,
		Source:              r.source,
		ReportingController: r.source.Component,
		ReportingInstance:   r.source.Host,
	}
	select {
	case r.queue <- ev:
	default:
		r.metrics.eventDropped()
	}
}
