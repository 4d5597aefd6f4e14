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
	files, err := s.startStaticPods(ctx, res, n, func(name string) []byte { return staticManifest(name, s.ns, "0") })
	if err != nil {
		return nil, err
	}
	if _, err := s.removeStaticPods(ctx, res, files); err != nil {
		return nil, err
	}
	return res, nil
}

// startStaticPods writes n manifests (manifest(name) for static-00000, static-00001, ...) in
// one burst and waits for every mirror pod to be Running, filling res's start numbers. It
// returns the manifest file names.
func (s *session) startStaticPods(ctx context.Context, res *Result, n int, manifest func(name string) []byte) ([]string, error) {
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
		if err := s.agent.writeManifest(files[i], manifest(name)); err != nil {
			return nil, err
		}
	}
	s.r.logf("%s: wrote %d manifests in %.2fs; waiting for mirrors Running", s.name, n, time.Since(start).Seconds())
	err = s.finishStart(ctx, res, startRun{what: "mirror pods", names: names, sent: written, start: start, begin: begin, timeout: 5 * time.Minute, waitProfile: waitProfile})
	return files, err
}

// removeStaticPods removes the manifest files and waits for every mirror pod to be gone,
// filling res's delete numbers. It returns when the first file was removed.
func (s *session) removeStaticPods(ctx context.Context, res *Result, files []string) (time.Time, error) {
	n := len(files)
	b, err := s.beginPhase(ctx)
	if err != nil {
		return time.Time{}, err
	}
	delStart := time.Now()
	for _, f := range files {
		if err := os.Remove(filepath.Join(s.agent.ManifestDir, f)); err != nil {
			return delStart, err
		}
	}
	if res.DeleteSeconds, err = s.waitAllDeleted(ctx, n, delStart, 5*time.Minute, "mirror pods"); err != nil {
		return delStart, err
	}
	s.r.logf("%s: all mirror pods deleted after %.2fs", s.name, res.DeleteSeconds)
	s.settle(ctx, 2*time.Second, 30*time.Second)
	cpu, use, err := s.endPhase(ctx, b)
	if err != nil {
		return delStart, err
	}
	res.DeleteCPUSeconds, res.DeleteRequests, res.DeleteWatchesClosed = cpu, use.Requests, use.WatchesClosed
	res.DeleteControlPlaneCPUSeconds = use.ControlPlaneCPUSeconds
	return delStart, nil
}
