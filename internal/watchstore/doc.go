// Package watchstore keeps a local store of API objects current with list and watch, like a
// client-go informer, but with the reconnect back-off capped at a few seconds instead of 30:
// after an API server outage the agent must see pods and its Node again within seconds of its
// return (client-go does not expose the back-off through informers yet, kubernetes#136943).
//
//	s := watchstore.New(lw, &corev1.Pod{}, func() { markDirty() })
//	go s.Run(ctx)
//	pods := s.List()
package watchstore
