// Package backoff is the agent's one retry policy: a delay that starts at Initial and doubles
// after every failure up to Max, and starts over after a success. Its users — the pod
// controller's work queues, the node controller's writes, the watch stores' reconnects, the
// file source's watches, the client certificate's bootstrap and the lifecycle's restarts and
// image pulls — differ only in those two numbers, each a Policy value named for what it
// retries.
//
//	var retry = backoff.Policy{Initial: 100 * time.Millisecond, Max: 5 * time.Second}
//
//	d := retry.Start()
//	for !try() {
//		<-clock.After(d.Next())
//	}
//
// What fails again and again under many names keeps the policy per key (Keyed, as client-go's
// flowcontrol.Backoff): the lifecycle's crash-loop back-off per container and image-pull
// back-off per pod and image, each starting over after a quiet period.
//
//	crashLoop := backoff.NewKeyed[string](backoff.Policy{Initial: 10 * time.Second, Max: 5 * time.Minute}, 10*time.Minute, clock)
//	delay := crashLoop.Next(key, exitedAt)
//
// A work queue takes the same policy as a rate limiter (Limiter); a client-go reflector or
// retry loop as a wait.Backoff (WaitBackoff).
//
// Two retries are not a Policy on purpose: the kubelet API's token and access reviews keep the
// API server's webhook numbers (delays growing by half, five attempts), and the process
// supervisor's state writes (runtime/process/internal/records) keep their six quick attempts
// without this package's client-go dependencies in the supervisor binary.
package backoff
