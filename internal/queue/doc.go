// Package queue is the agent's one hand-off between goroutines that must not wait for each
// other: producers record work with [Queue.Add], which never blocks, and one consumer is woken
// by [Queue.Ready] and collects everything recorded since it last looked with [Queue.Take].
// Producers may run under locks of their own and the consumer may be slow (a callback, a sync,
// a probe), so neither holds up the other.
//
// A Queue guarantees:
//
//   - Ordering: [Queue.Take] returns the pending items in the order their keys were first added
//     since the previous Take.
//   - Coalescing: adding a key that is already pending does not queue it again: it keeps its
//     place and its value becomes merge(old, new) (with a nil merge, the new value). Keys that
//     differ are never coalesced, so a caller that must lose nothing gives each item a key of
//     its own, or merges by appending.
//   - Add never blocks: it holds the Queue's own lock only for as long as merge runs, and never
//     waits for the consumer. What is pending takes one entry per key, however many Adds.
//   - Wake-ups: Ready receives after an Add; a burst of Adds before the consumer looks may be one
//     receive, and Take consumes a wake-up already given for what it returns, so a receive
//     means there was an Add after the last Take. A receive is a hint, not a count.
//   - Context: a Queue owns no goroutine and knows no context. The consumer's loop stops when
//     its context ends; items still pending then stay until someone takes them, and are dropped
//     with the Queue.
//   - Goroutine-safety: all methods may be called concurrently; one consumer is assumed (two
//     would split the items between them, each batch still in order).
//
// A plain "there is new work" signal is a Queue with a single key:
//
//	wake := queue.New[struct{}, struct{}](nil)
//	wake.Add(struct{}{}, struct{}{}) // from any goroutine
//	for {
//		select {
//		case <-ctx.Done():
//			return
//		case <-wake.Ready():
//			wake.Take()
//			// look at the work
//		}
//	}
package queue
