package containerlog

import (
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vk-static/vk-static/containerlog/logwriter"
	"github.com/vk-static/vk-static/provider"
)

// A tail read of a log that grows after the tail was found ends with the last lines as they
// were, as the kubelet's does (it stops after that many entries); with Follow the new lines
// come after them.
func TestTailOfAGrowingLog(t *testing.T) {
	for _, follow := range []bool{false, true} {
		t.Run(fmt.Sprintf("follow=%v", follow), func(t *testing.T) {
			w, path := newTestWriter(t, logwriter.Options{MaxSize: 1 << 20, MaxFiles: 2})
			for i := 1; i <= 10; i++ {
				_, err := fmt.Fprintf(w.Stdout(), "line %d\n", i)
				require.NoError(t, err)
			}
			done := make(chan struct{})
			rc, err := Open(context.Background(), path, provider.ContainerLogOpts{Tail: 3, Follow: follow}, done)
			require.NoError(t, err)
			defer rc.Close()
			// Written after the tail was found, before it is read.
			_, err = fmt.Fprintf(w.Stdout(), "line 11\n")
			require.NoError(t, err)
			require.NoError(t, w.Close())
			close(done)
			got, err := io.ReadAll(rc)
			require.NoError(t, err)
			want := "line 8\nline 9\nline 10\n"
			if follow {
				want += "line 11\n"
			}
			assert.Equal(t, want, string(got))
		})
	}
}
