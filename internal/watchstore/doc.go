// Package watchstore keeps a local store of API objects current with list and watch, like a
// client-go informer, but with the reconnect back-off capped at a few seconds instead of 30:
// after an API server outage the agent must see pods and its Node again within seconds of its
// return (client-go does not expose the back-off through informers yet, kubernetes#136943).
//
// Two options serve a reader that must stay O(1) per change on a large store: WithTransform
// trims objects as they enter (an informer's SetTransform), and TrackChanges records which keys
// changed, so the reader takes the changed keys (TakeChanges) instead of listing everything;
// only after a (re)list, when deletions may have been missed, must it List.
//
//	s := watchstore.New(lw, &corev1.Pod{}, markDirty, watchstore.TrackChanges())
//	go s.Run(ctx)
//	// on markDirty:
//	c := s.TakeChanges()
//	if c.Relisted { all := s.List() } else { for _, k := range c.Keys { obj, ok, _ := s.GetByKey(k) } }
package watchstore
