package mock

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/provider"
)

// readLogs reads a whole (not followed) log.
func readLogs(t *testing.T, p *Provider, name, container string, opts provider.ContainerLogOpts) string {
	t.Helper()
	r, err := p.GetContainerLogs(context.Background(), "ns", name, container, opts)
	require.NoError(t, err)
	defer r.Close()
	b, err := io.ReadAll(r)
	require.NoError(t, err)
	return string(b)
}

// readAsync reads r to its end on another goroutine.
func readAsync(r io.Reader) <-chan readResult {
	ch := make(chan readResult, 1)
	go func() {
		b, err := io.ReadAll(r)
		ch <- readResult{string(b), err}
	}()
	return ch
}

type readResult struct {
	text string
	err  error
}

func wait(t *testing.T, ch <-chan readResult) readResult {
	t.Helper()
	select {
	case res := <-ch:
		return res
	case <-time.After(10 * time.Second):
		t.Fatal("the log stream did not end")
		return readResult{}
	}
}

// A job (create-delay 10.25s, run-duration 20s, exit code 3) leaves a log of three lines at
// distinct times — created at 0s, started at 10.25s, stopped at 30.25s — that every option is
// checked against.
func TestContainerLogOptions(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	job := newPod("job", map[string]string{CreateDelayAnnotation: "10.25s", RunDurationAnnotation: "20s", ExitCodeAnnotation: "3"})
	job.Spec.RestartPolicy = corev1.RestartPolicyNever
	require.NoError(t, h.p.CreatePod(ctx, job))
	h.step(t, 10250*time.Millisecond)
	h.next(t, "job", phase(corev1.PodRunning))
	h.step(t, 20*time.Second)
	h.next(t, "job", phase(corev1.PodFailed))
	h.clock.Step(5 * time.Second) // now is 35.25s

	const (
		created = "mock: created container app (image nginx:1)\n"
		started = "mock: started container app\n"
		stopped = "mock: stopped container app: exit code 3 (Error)\n"
	)
	const started10s = 10250 * time.Millisecond
	for _, tc := range []struct {
		name string
		opts provider.ContainerLogOpts
		want string
	}{
		{name: "whole log", want: created + started + stopped},
		{name: "timestamps", opts: provider.ContainerLogOpts{Timestamps: true},
			want: "2026-01-02T03:04:05Z " + created + "2026-01-02T03:04:15.25Z " + started + "2026-01-02T03:04:35.25Z " + stopped},
		{name: "tail", opts: provider.ContainerLogOpts{Tail: 2}, want: started + stopped},
		{name: "tail longer than the log", opts: provider.ContainerLogOpts{Tail: 10}, want: created + started + stopped},
		{name: "since time is inclusive", opts: provider.ContainerLogOpts{SinceTime: epoch.Add(started10s)}, want: started + stopped},
		{name: "since time just after a line", opts: provider.ContainerLogOpts{SinceTime: epoch.Add(started10s + 1)}, want: stopped},
		{name: "since time after the last line", opts: provider.ContainerLogOpts{SinceTime: epoch.Add(31 * time.Second)}, want: ""},
		{name: "since seconds, from the provider's clock", opts: provider.ContainerLogOpts{SinceSeconds: 25}, want: started + stopped},
		{name: "the later of since seconds and since time", opts: provider.ContainerLogOpts{SinceSeconds: 25, SinceTime: epoch.Add(20 * time.Second)}, want: stopped},
		{name: "since, then tail", opts: provider.ContainerLogOpts{SinceTime: epoch.Add(time.Second), Tail: 5}, want: started + stopped},
		{name: "tail, then the byte limit", opts: provider.ContainerLogOpts{Tail: 2, LimitBytes: 10}, want: started[:10]},
		{name: "byte limit longer than the log", opts: provider.ContainerLogOpts{LimitBytes: 1 << 20}, want: created + started + stopped},
		{name: "follow a terminated container ends at once", opts: provider.ContainerLogOpts{Follow: true}, want: created + started + stopped},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, readLogs(t, h.p, "job", "app", tc.opts))
		})
	}

	t.Run("init container", func(t *testing.T) {
		want := "mock: created container init (image busybox)\nmock: started container init\nmock: stopped container init: exit code 0 (Completed)\n"
		assert.Equal(t, want, readLogs(t, h.p, "job", "init", provider.ContainerLogOpts{}))
	})

	for _, tc := range []struct {
		name, pod, container string
		opts                 provider.ContainerLogOpts
	}{
		{name: "unknown pod", pod: "ghost", container: "app"},
		{name: "unknown container", pod: "job", container: "nope"},
		{name: "no previous instance", pod: "job", container: "app", opts: provider.ContainerLogOpts{Previous: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := h.p.GetContainerLogs(ctx, "ns", tc.pod, tc.container, tc.opts)
			assert.True(t, provider.IsNotFound(err), "%v", err)
		})
	}
}

// A restart (an image update) ends the current instance, which becomes the previous one, and
// ends a stream that follows it.
func TestContainerLogsRestart(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	pod := newPod("web", nil)
	require.NoError(t, h.p.CreatePod(ctx, pod))
	following, err := h.p.GetContainerLogs(ctx, "ns", "web", "app", provider.ContainerLogOpts{Follow: true})
	require.NoError(t, err)
	defer following.Close()
	done := readAsync(following)

	h.clock.Step(time.Minute)
	pod.Spec.Containers[0].Image = "nginx:2"
	require.NoError(t, h.p.UpdatePod(ctx, pod))

	previous := "mock: created container app (image nginx:1)\nmock: started container app\n" +
		"mock: stopped container app to restart it with image nginx:2\n"
	res := wait(t, done)
	require.NoError(t, res.err)
	assert.Equal(t, previous, res.text, "following the old instance ends with it")
	assert.Equal(t, previous, readLogs(t, h.p, "web", "app", provider.ContainerLogOpts{Previous: true}))
	assert.Equal(t, "mock: restarted container app (restart 1, image nginx:2)\nmock: started container app\n",
		readLogs(t, h.p, "web", "app", provider.ContainerLogOpts{}))
	assert.Equal(t, epoch.Add(time.Minute).Format(time.RFC3339Nano)+" mock: started container app\n",
		readLogs(t, h.p, "web", "app", provider.ContainerLogOpts{Timestamps: true, Tail: 1}))
	assert.Equal(t, "mock: created container side (image busybox)\nmock: started container side\n",
		readLogs(t, h.p, "web", "side", provider.ContainerLogOpts{}), "an unchanged container did not restart")
}

// Follow waits for the container's next events and ends when it terminates.
func TestContainerLogsFollow(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	pod := newPod("web", map[string]string{DeleteDelayAnnotation: DeleteDelayGrace})
	grace := int64(5)
	pod.Spec.TerminationGracePeriodSeconds = &grace
	require.NoError(t, h.p.CreatePod(ctx, pod))

	r, err := h.p.GetContainerLogs(ctx, "ns", "web", "app", provider.ContainerLogOpts{Follow: true, Tail: 1})
	require.NoError(t, err)
	defer r.Close()
	buf := make([]byte, 100)
	n, err := r.Read(buf)
	require.NoError(t, err)
	assert.Equal(t, "mock: started container app\n", string(buf[:n]))

	done := readAsync(r)
	select {
	case res := <-done:
		t.Fatalf("the stream ended while the container runs: %+v", res)
	case <-time.After(50 * time.Millisecond):
	}
	require.NoError(t, h.p.DeletePod(ctx, pod))
	h.step(t, 5*time.Second)
	res := wait(t, done)
	require.NoError(t, res.err)
	assert.Equal(t, "mock: stopping container app (pod deleted, grace period 5s)\nmock: stopped container app: exit code 0 (Completed)\n", res.text)
}

// A container whose pod is deleted while it is being created stops without having started.
func TestContainerLogsDeletedBeforeStart(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	pod := newPod("slow", map[string]string{CreateDelayAnnotation: "1m"})
	require.NoError(t, h.p.CreatePod(ctx, pod))
	r, err := h.p.GetContainerLogs(ctx, "ns", "slow", "app", provider.ContainerLogOpts{Follow: true})
	require.NoError(t, err)
	defer r.Close()
	done := readAsync(r)
	require.NoError(t, h.p.DeletePod(ctx, pod))
	res := wait(t, done)
	require.NoError(t, res.err)
	assert.Equal(t, "mock: created container app (image nginx:1)\nmock: stopped container app: exit code 0 (Completed)\n", res.text)
}

// A followed stream ends with ctx, or with Close, while the container runs on.
func TestContainerLogsFollowEnds(t *testing.T) {
	for _, tc := range []struct {
		name    string
		end     func(cancel context.CancelFunc, r io.Closer)
		wantErr error
	}{
		{name: "ctx", end: func(cancel context.CancelFunc, _ io.Closer) { cancel() }, wantErr: context.Canceled},
		{name: "close", end: func(_ context.CancelFunc, r io.Closer) { r.Close() }, wantErr: io.ErrClosedPipe},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			require.NoError(t, h.p.CreatePod(context.Background(), newPod("web", nil)))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			r, err := h.p.GetContainerLogs(ctx, "ns", "web", "app", provider.ContainerLogOpts{Follow: true, Tail: 1})
			require.NoError(t, err)
			defer r.Close()
			done := readAsync(r)
			time.Sleep(10 * time.Millisecond) // usually waiting by now; either way the stream must end
			tc.end(cancel, r)
			res := wait(t, done)
			assert.ErrorIs(t, res.err, tc.wantErr)
			assert.Equal(t, "mock: started container app\n", res.text)
		})
	}
}

// Followers race with the lifecycle: every stream ends with its container, nothing leaks.
func TestContainerLogsConcurrentFollowers(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 50 {
				pod := newPod(fmt.Sprintf("p-%d-%d", w, i), nil)
				if !assert.NoError(t, h.p.CreatePod(ctx, pod)) {
					return
				}
				r, err := h.p.GetContainerLogs(ctx, "ns", pod.Name, "side", provider.ContainerLogOpts{Follow: true})
				if !assert.NoError(t, err) {
					return
				}
				done := readAsync(r)
				assert.NoError(t, h.p.DeletePod(ctx, pod))
				res := wait(t, done)
				assert.NoError(t, res.err)
				assert.True(t, strings.HasSuffix(res.text, "mock: stopped container side: exit code 0 (Completed)\n"), res.text)
				r.Close()
			}
		})
	}
	wg.Wait()
}
