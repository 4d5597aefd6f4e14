package testcontainerd

import (
	"context"
	"errors"
	"testing"
)

// TestMissingBinariesAreAnErrorWithTheHint: without containerd (not in PATH nor in an sbin
// directory) Start fails with ErrNotInstalled, whose message says `make testbin`.
func TestMissingBinariesAreAnErrorWithTheHint(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := Start(context.Background(), Options{})
	if !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("Start with no containerd in PATH: %v, want ErrNotInstalled", err)
	}
	t.Log(err)
}
