package bench

import (
	"context"
	"fmt"
	"time"
)

// editPollInterval is how often the agent's provider-call counters are read after an edit:
// the resolution of the edit → provider latencies.
const editPollInterval = 2 * time.Millisecond

// runEdits keeps k static pods Running and edits them one at a time, edits times in all,
// measuring edit → DeletePod of the old pod, → CreatePod of the new one (from the agent's
// provider-call counters) and → the new mirror Running (from the watch).
func runEdits(ctx context.Context, s *session, k, edits int) (*Result, error) {
	ready, err := s.startAgent(ctx, k+100)
	if err != nil {
		return nil, err
	}
	res := &Result{Pods: k, AgentReadySeconds: ready.Seconds(), Edit: &EditResult{Edits: edits, PollIntervalMs: float64(editPollInterval) / float64(time.Millisecond)}}
	for i := range k {
		if err := s.agent.writeManifest(fmt.Sprintf("edit-%02d.yaml", i), staticManifest(fmt.Sprintf("edit-%02d", i), s.ns, "0")); err != nil {
			return nil, err
		}
	}
	if err := s.watcher.waitUntil(ctx, time.Minute, "mirrors Running", func(w *podWatcher) bool { return w.running >= k }); err != nil {
		return nil, err
	}
	s.settle(ctx, time.Second, 10*time.Second)

	const metric = "vk_static_provider_call_duration_seconds_count"
	calls := func(call string) (float64, error) {
		return s.agent.metric(ctx, metric, map[string]string{"call": call})
	}
	waitProfile := s.startProfile(ctx, "edits", 15)
	var toDelete, toCreate, toMirror []time.Duration
	for e := 1; e <= edits; e++ {
		i := (e - 1) % k
		name := fmt.Sprintf("edit-%02d", i)
		mirror := name + "-" + s.node
		oldUID, _, ok := s.watcher.byPodName(mirror)
		if !ok {
			return nil, fmt.Errorf("no mirror pod %s", mirror)
		}
		deletes0, err := calls("DeletePod")
		if err != nil {
			return nil, err
		}
		creates0, err := calls("CreatePod")
		if err != nil {
			return nil, err
		}
		t0 := time.Now()
		if err := s.agent.writeManifest(name+".yaml", staticManifest(name, s.ns, fmt.Sprint(e))); err != nil {
			return nil, err
		}
		var deleted, created time.Time
		err = poll(ctx, 30*time.Second, editPollInterval, func() (bool, error) {
			d, err := calls("DeletePod")
			if err != nil {
				return false, err
			}
			c, err := calls("CreatePod")
			if err != nil {
				return false, err
			}
			now := time.Now()
			if deleted.IsZero() && d > deletes0 {
				deleted = now
			}
			if c > creates0 {
				created = now
				if deleted.IsZero() {
					deleted = now
				}
				return true, nil
			}
			return false, nil
		})
		if err != nil {
			return nil, fmt.Errorf("edit %d: provider not called: %w", e, err)
		}
		toDelete, toCreate = append(toDelete, deleted.Sub(t0)), append(toCreate, created.Sub(t0))
		var runningAt time.Time
		err = s.watcher.waitUntil(ctx, 30*time.Second, "new mirror Running", func(w *podWatcher) bool {
			uid, ok := w.byName[mirror]
			if !ok || uid == oldUID || w.pods[uid].Running.IsZero() {
				return false
			}
			runningAt = w.pods[uid].Running
			return true
		})
		if err != nil {
			return nil, fmt.Errorf("edit %d: %w", e, err)
		}
		toMirror = append(toMirror, runningAt.Sub(t0))
	}
	res.Edit.ToDelete, res.Edit.ToCreate, res.Edit.ToMirror = percentiles(toDelete), percentiles(toCreate), percentiles(toMirror)
	res.Profiles = append(res.Profiles, waitProfile()...)
	return res, nil
}
