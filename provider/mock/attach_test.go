package mock

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vk-static/vk-static/provider"
)

const attachNotice = "mock: container app runs no process and has no output; attached input is echoed\n"

func TestAttachToContainer(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	require.NoError(t, h.p.CreatePod(ctx, newPod("web", nil)))

	t.Run("echoes stdin, says so on stderr", func(t *testing.T) {
		c := newClient("hello\n")
		require.NoError(t, h.p.AttachToContainer(ctx, "ns", "web", "app", c))
		assert.Equal(t, "hello\n", c.stdout.String())
		assert.Equal(t, attachNotice, c.stderr.String())
	})
	t.Run("terminal", func(t *testing.T) {
		c := newClient("hello\n")
		c.stderr, c.tty = nil, true
		require.NoError(t, h.p.AttachToContainer(ctx, "ns", "web", "app", c))
		assert.Equal(t, attachNotice+"hello\n", c.stdout.String())
	})
	for _, tc := range []struct {
		name, pod, container string
		check                func(error) bool
	}{
		{name: "unknown pod", pod: "ghost", container: "app", check: provider.IsNotFound},
		{name: "unknown container", pod: "web", container: "nope", check: provider.IsNotFound},
		{name: "completed init container", pod: "web", container: "init", check: notRunning},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient("x")
			err := h.p.AttachToContainer(ctx, "ns", tc.pod, tc.container, c)
			assert.True(t, tc.check(err), "%v", err)
			assert.Empty(t, c.stdout.String()+c.stderr.String())
		})
	}
}

// Without stdin an attach lasts as long as the process: until the container stops or ctx ends.
func TestAttachWithoutStdinEnds(t *testing.T) {
	for _, tc := range []struct {
		name    string
		end     func(h *harness, cancel context.CancelFunc)
		wantErr error
	}{
		{name: "container stopped", end: func(h *harness, _ context.CancelFunc) {
			_ = h.p.DeletePod(context.Background(), newPod("web", nil))
		}},
		{name: "ctx", end: func(_ *harness, cancel context.CancelFunc) { cancel() }, wantErr: context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			require.NoError(t, h.p.CreatePod(context.Background(), newPod("web", nil)))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			c := newClient("")
			done := make(chan error, 1)
			go func() { done <- h.p.AttachToContainer(ctx, "ns", "web", "app", c) }()
			require.Eventually(t, func() bool { return c.stderr.String() == attachNotice }, 10*time.Second, time.Millisecond)
			select {
			case err := <-done:
				t.Fatalf("attach ended on its own: %v", err)
			case <-time.After(20 * time.Millisecond):
			}
			tc.end(h, cancel)
			select {
			case err := <-done:
				if tc.wantErr != nil {
					assert.ErrorIs(t, err, tc.wantErr)
				} else {
					assert.NoError(t, err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("attach did not end")
			}
		})
	}
}

// An attach with stdin also ends when the container stops, though stdin stays open.
func TestAttachEndsWithContainer(t *testing.T) {
	h := newHarness(t)
	pod := newPod("web", nil)
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	in, stdin := io.Pipe()
	defer stdin.Close()
	c := newClient("")
	c.stdin = in
	done := make(chan error, 1)
	go func() { done <- h.p.AttachToContainer(context.Background(), "ns", "web", "app", c) }()
	_, err := stdin.Write([]byte("a"))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return c.stdout.String() == "a" }, 10*time.Second, time.Millisecond)
	require.NoError(t, h.p.DeletePod(context.Background(), pod))
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("attach outlived its container")
	}
}
