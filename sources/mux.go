// mux.go holds the Mux: it runs the sources and turns their snapshots into ordered updates
// through the [Merger], as the kubelet's config/mux.go merges its sources.

package sources

import (
	"context"
	"sync"

	"k8s.io/klog/v2"
)

// Source is what Mux runs: FileSource, HTTPSource, APISource, or a library user's own.
type Source interface {
	// Name is the source's name, the value of Snapshot.Source it sends.
	Name() string
	// Run sends snapshots on out until ctx is done; it must stop sending then. The first one
	// that is full makes the source seen; partial snapshots (see Snapshot) may follow it.
	Run(ctx context.Context, out chan<- Snapshot)
}

// Mux runs sources, feeds their snapshots through one Merger and delivers the resulting updates,
// in order and never dropping one, on Updates. Problems (undecodable manifests are reported by
// the sources themselves; duplicate names by the Merger) go to the ProblemReporter, which logs
// them; with none, they are logged at error level.
//
// A source counts as seen once every update caused by its first snapshot has been received from
// Updates (the last of them is marked SourceSeen) — so a consumer that sees Ready closed also
// has every source's pods. Sources retry on their own and never fail the Mux.
type Mux struct {
	sources  []Source
	problems ProblemReporter
	updates  chan PodUpdate

	ready chan struct{} // closed when every source is seen
	done  chan struct{}

	mu      sync.Mutex
	started bool
}

// NewMux returns a Mux for sources; problems may be nil.
func NewMux(problems ProblemReporter, sources ...Source) *Mux {
	return &Mux{
		sources:  sources,
		problems: problems,
		updates:  make(chan PodUpdate),
		ready:    make(chan struct{}),
		done:     make(chan struct{}),
	}
}

// Updates delivers the merged updates; it is closed when Run returns.
func (m *Mux) Updates() <-chan PodUpdate { return m.updates }

// Ready is closed once every source is seen.
func (m *Mux) Ready() <-chan struct{} { return m.ready }

// Done is closed when Run has returned.
func (m *Mux) Done() <-chan struct{} { return m.done }

// queued is an update waiting for the consumer, or (update nil) the marker that a source's
// first snapshot has been fully delivered.
type queued struct {
	update   *PodUpdate
	seenMark string
}

// Run starts the sources and delivers updates until ctx is done, then waits for the sources to
// stop, closes Updates and returns. Updates not yet received when ctx is done are dropped with
// everything else. Run may be called once.
func (m *Mux) Run(ctx context.Context) {
	m.mu.Lock()
	if m.started {
		m.mu.Unlock()
		panic("sources: Mux.Run called twice")
	}
	m.started = true
	m.mu.Unlock()

	logger := klog.FromContext(ctx)
	defer close(m.done)
	defer close(m.updates)
	if len(m.sources) == 0 {
		close(m.ready)
	}

	snapshots := make(chan Snapshot)
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, src := range m.sources {
		wg.Add(1)
		go func() {
			defer wg.Done()
			src.Run(ctx, snapshots)
		}()
	}

	merger := NewMerger()
	seen := make(map[string]bool, len(m.sources))
	var queue []queued
	for {
		// Markers at the head mean a first snapshot has been delivered in full.
		for len(queue) > 0 && queue[0].update == nil {
			if m.markSeen(seen, queue[0].seenMark) {
				logSeen(logger, merger, m.sources)
			}
			queue = queue[1:]
		}
		var out chan<- PodUpdate
		var head PodUpdate
		if len(queue) > 0 {
			out, head = m.updates, *queue[0].update
		}
		select {
		case <-ctx.Done():
			return
		case out <- head:
			queue = queue[1:]
		case snap := <-snapshots:
			unseen := !merger.Seen(snap.Source)
			updates, problems := merger.MergeAndReport(snap)
			first := unseen && merger.Seen(snap.Source) // a partial snapshot cannot make it seen
			for _, p := range problems {
				report(logger, m.problems, p)
			}
			logger.V(4).Info("Merged snapshot", "source", snap.Source, "pods", len(snap.Pods), "partial", snap.Partial, "deleted", len(snap.Deleted), "updates", len(updates))
			if first {
				if len(updates) == 0 {
					updates = append(updates, PodUpdate{Op: ADD, Source: snap.Source})
				}
				updates[len(updates)-1].SourceSeen = true
			}
			for i := range updates {
				queue = append(queue, queued{update: &updates[i]})
			}
			if first {
				queue = append(queue, queued{seenMark: snap.Source})
			}
		}
	}
}

// markSeen records that source is seen and closes Ready once every source is; it reports
// whether it closed it now.
func (m *Mux) markSeen(seen map[string]bool, source string) bool {
	seen[source] = true
	for _, src := range m.sources {
		if !seen[src.Name()] {
			return false
		}
	}
	select {
	case <-m.ready:
		return false
	default:
		close(m.ready)
		return true
	}
}

// logSeen says, once, that every source has been seen and how many pods each has: the moment
// an operator knows the agent has all its pods, and whether they are the ones expected.
func logSeen(logger klog.Logger, merger *Merger, srcs []Source) {
	kv := make([]any, 0, 2*len(srcs))
	for _, src := range srcs {
		kv = append(kv, src.Name(), merger.PodCount(src.Name()))
	}
	logger.Info("Every pod source seen; pods by source", kv...)
}
