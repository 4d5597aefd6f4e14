package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// staticManifest is a minimal static pod; extra lands in its annotations so an edit changes
// the content (and so the pod's UID).
func staticManifest(name, ns, extra string) []byte {
	return fmt.Appendf(nil, `apiVersion: v1
kind: Pod
metadata:
  name: %s
  namespace: %s
  annotations:
    vkbench/revision: %q
spec:
  containers:
  - name: c
    image: registry.k8s.io/pause:3.10
`, name, ns, extra)
}

// runStaticPods writes n manifests in one burst, waits for every mirror pod to be Running,
// then removes the files and waits for every mirror to be gone.
func runStaticPods(ctx context.Context, s *session, n int) (*Result, error) {
	ready, err := s.startAgent(ctx, n+100)
	if err != nil {
		return nil, err
	}
	res := &Result{Pods: n, AgentReadySeconds: ready.Seconds()}
	begin, err := s.beginPhase(ctx)
	if err != nil {
		return nil, err
	}
	waitProfile := s.startProfile(ctx, "start", profileSeconds(n)+5)
	names := make([]string, n) // mirror pod names
	files := make([]string, n) // manifest file names
	written := make([]time.Time, n)
	start := time.Now()
	for i := range n {
		name := fmt.Sprintf("static-%05d", i)
		names[i], files[i] = name+"-"+s.node, name+".yaml"
		written[i] = time.Now()
		if err := s.agent.writeManifest(files[i], staticManifest(name, s.ns, "0")); err != nil {
			return nil, err
		}
	}
	s.r.logf("%s: wrote %d manifests in %.2fs; waiting for mirrors Running", s.name, n, time.Since(start).Seconds())
	if err := s.finishStart(ctx, res, startRun{what: "mirror pods", names: names, sent: written, start: start, begin: begin, timeout: 5 * time.Minute, waitProfile: waitProfile}); err != nil {
		return nil, err
	}

	b, err := s.beginPhase(ctx)
	if err != nil {
		return nil, err
	}
	delStart := time.Now()
	for _, f := range files {
		if err := os.Remove(filepath.Join(s.agent.ManifestDir, f)); err != nil {
			return nil, err
		}
	}
	if err := s.watcher.waitProgress(ctx, stallTimeout, 5*time.Minute, "all mirror pods deleted", func(w *podWatcher) bool { return w.deleted >= n }); err != nil {
		_, deleted := s.watcher.counts()
		return nil, fmt.Errorf("%w (%d of %d deleted)", err, deleted, n)
	}
	var gone []time.Time
	for _, p := range s.watcher.all() {
		gone = append(gone, p.Deleted)
	}
	res.DeleteSeconds = lastOf(gone).Sub(delStart).Seconds()
	s.settle(ctx, 2*time.Second, 30*time.Second)
	cpu, reqs, _, err := s.endPhase(ctx, b)
	if err != nil {
		return nil, err
	}
	res.DeleteCPUSeconds, res.DeleteRequests = cpu, reqs
	return res, nil
}
