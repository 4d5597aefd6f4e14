// Package backoff is the agent's one retry policy: a delay that starts at Initial and doubles
// after every failure up to Max, and starts over after a success. Its users — the pod
// controller's work queues, the node controller's writes, the watch stores' reconnects and the
// file source's watches — differ only in those two numbers, each a Policy value named for what
// it retries.
//
//	var retry = backoff.Policy{Initial: 100 * time.Millisecond, Max: 5 * time.Second}
//
//	d := retry.Start()
//	for !try() {
//		<-clock.After(d.Next())
//	}
//
// A work queue takes the same policy as a rate limiter (Limiter); a client-go reflector as a
// wait.Backoff (WaitBackoff).
package backoff
