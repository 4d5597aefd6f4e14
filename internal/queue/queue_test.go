package queue

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func keys[K comparable, V any](items []Item[K, V]) []K {
	var ks []K
	for _, it := range items {
		ks = append(ks, it.Key)
	}
	return ks
}

// woken reports whether a wake-up is pending, without waiting for one.
func woken[K comparable, V any](q *Queue[K, V]) bool {
	select {
	case <-q.Ready():
		return true
	default:
		return false
	}
}

func TestTakeInFirstAddedOrder(t *testing.T) {
	q := New[string, int](nil)
	assert.Empty(t, q.Take(), "a new queue holds nothing")
	q.Add("b", 1)
	q.Add("a", 2)
	q.Add("c", 3)
	assert.Equal(t, []Item[string, int]{{"b", 1}, {"a", 2}, {"c", 3}}, q.Take())
	assert.Empty(t, q.Take(), "Take empties the queue")
}

func TestPendingKeyKeepsItsPlaceNewestWins(t *testing.T) {
	q := New[string, int](nil)
	q.Add("a", 1)
	q.Add("b", 2)
	q.Add("a", 3)
	assert.Equal(t, []Item[string, int]{{"a", 3}, {"b", 2}}, q.Take())

	q.Add("b", 4)
	q.Add("a", 5)
	assert.Equal(t, []string{"b", "a"}, keys(q.Take()), "a key taken is queued afresh, at the end")
}

func TestMergeGetsOldThenNew(t *testing.T) {
	var calls [][2]string
	q := New[int, string](func(old, new string) string {
		calls = append(calls, [2]string{old, new})
		return old + new
	})
	q.Add(1, "x")
	assert.Empty(t, calls, "a key not pending is not merged")
	q.Add(1, "y")
	q.Add(1, "z")
	assert.Equal(t, [][2]string{{"x", "y"}, {"xy", "z"}}, calls)
	assert.Equal(t, []Item[int, string]{{1, "xyz"}}, q.Take())
	q.Add(1, "w")
	assert.Equal(t, []Item[int, string]{{1, "w"}}, q.Take(), "nothing is merged across a Take")
}

func TestMergeByAppendingLosesNothing(t *testing.T) {
	q := New[struct{}, []int](func(old, new []int) []int { return append(old, new...) })
	for i := range 5 {
		q.Add(struct{}{}, []int{i})
	}
	first := q.Take()
	require.Len(t, first, 1)
	assert.Equal(t, []int{0, 1, 2, 3, 4}, first[0].Value)
	q.Add(struct{}{}, []int{5})
	assert.Equal(t, []int{0, 1, 2, 3, 4}, first[0].Value, "a taken value is the caller's: later Adds do not write into it")
}

func TestTakenSliceIsTheCallers(t *testing.T) {
	q := New[int, int](nil)
	q.Add(1, 1)
	q.Add(2, 2)
	taken := q.Take()
	taken[0] = Item[int, int]{9, 9}
	q.Add(3, 3)
	assert.Equal(t, []Item[int, int]{{3, 3}}, q.Take())
	assert.Equal(t, []Item[int, int]{{9, 9}, {2, 2}}, taken)
}

func TestReady(t *testing.T) {
	q := New[int, int](nil)
	assert.False(t, woken(q), "no wake-up before an Add")

	q.Add(1, 1)
	assert.True(t, woken(q), "an Add wakes")
	assert.False(t, woken(q), "once")
	assert.Len(t, q.Take(), 1, "a wake-up is followed by something to take")

	for i := range 100 {
		q.Add(i%3, i)
	}
	assert.Len(t, q.Ready(), 1, "a burst is one pending wake-up")
	assert.Len(t, q.Take(), 3)
	assert.False(t, woken(q), "Take consumes the wake-up for what it returned")

	q.Add(1, 1)
	assert.Len(t, q.Take(), 1)
	q.Add(2, 2)
	assert.True(t, woken(q), "an Add after a Take wakes again, even if the earlier wake-up was never received")
}

func TestAddNeverBlocks(t *testing.T) {
	// Nobody receives or takes: every Add must still return.
	q := New[int, int](nil)
	for i := range 10000 {
		q.Add(i, i)
	}
	items := q.Take()
	require.Len(t, items, 10000)
	for i, it := range items {
		assert.Equal(t, i, it.Key)
	}
}

// Concurrent producers and one consumer: every item arrives, each producer's in its order,
// and every wake-up finds something to take.
func TestConcurrentProducersOneConsumer(t *testing.T) {
	const producers, perProducer = 8, 2000
	type key struct{ producer, seq int }
	q := New[key, int](nil)
	// A second queue coalesces all of each producer's values under one key by appending.
	appended := New[int, []int](func(old, new []int) []int { return append(old, new...) })

	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			for i := range perProducer {
				q.Add(key{p, i}, i)
				appended.Add(p, []int{i})
			}
		})
	}

	next := make([]int, producers)
	got := 0
	for got < producers*perProducer {
		<-q.Ready()
		items := q.Take()
		require.NotEmpty(t, items, "a wake-up with nothing to take")
		for _, it := range items {
			require.Equal(t, next[it.Key.producer], it.Key.seq, "producer %d out of order", it.Key.producer)
			require.Equal(t, it.Key.seq, it.Value)
			next[it.Key.producer]++
			got++
		}
	}
	wg.Wait()
	assert.Empty(t, q.Take(), "nothing was left or duplicated")

	all := make(map[int][]int)
	for _, it := range appended.Take() {
		all[it.Key] = it.Value
	}
	require.Len(t, all, producers)
	for p, vs := range all {
		require.Len(t, vs, perProducer, "producer %d", p)
		for i, v := range vs {
			require.Equal(t, i, v, "producer %d out of order", p)
		}
	}
}

// A consumer loop stops with its context; Adds after that still return, and what is pending
// stays for a later Take.
func TestConsumerStopsWithContext(t *testing.T) {
	q := New[int, int](nil)
	ctx, cancel := context.WithCancel(context.Background())
	delivered := make(chan int)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-ctx.Done():
				return
			case <-q.Ready():
			}
			for _, it := range q.Take() {
				delivered <- it.Value
			}
		}
	}()
	q.Add(1, 10)
	assert.Equal(t, 10, <-delivered)
	cancel()
	<-stopped
	q.Add(2, 20)
	q.Add(3, 30)
	assert.Equal(t, []Item[int, int]{{2, 20}, {3, 30}}, q.Take())
}

func Example() {
	// Statuses per pod: a pod changed twice before delivery is delivered once, newest, in the
	// place of its first change.
	q := New[string, string](nil)
	q.Add("pod-a", "Pending")
	q.Add("pod-b", "Pending")
	q.Add("pod-a", "Running")
	<-q.Ready()
	for _, it := range q.Take() {
		fmt.Println(it.Key, it.Value)
	}
	// Output:
	// pod-a Running
	// pod-b Pending
}
