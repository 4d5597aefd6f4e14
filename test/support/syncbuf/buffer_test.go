package syncbuf

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Writes and reads from several goroutines at once: the race detector checks the locking.
func TestConcurrentWritesAllArrive(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				_, _ = fmt.Fprintf(&b, "%d", i)
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	assert.NoError(t, b.Close())
	for i := range 4 {
		assert.Equal(t, 100, strings.Count(b.String(), fmt.Sprint(i)))
	}
}
