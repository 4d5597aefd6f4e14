package mock

import "k8s.io/apimachinery/pkg/types"

// Calls counts the lifecycle calls the provider received for one pod UID, failed calls included.
type Calls struct {
	Create, Update, Delete int
}

// Calls returns the counters for uid; the zero value if the provider never saw it. Counters
// outlive the pod, so a test can check that a UID was created once over a whole scenario.
func (p *Provider) Calls(uid types.UID) Calls {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c := p.calls[uid]; c != nil {
		return *c
	}
	return Calls{}
}
