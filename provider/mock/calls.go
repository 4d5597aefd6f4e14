package mock

import "k8s.io/apimachinery/pkg/types"

// Calls counts the lifecycle calls the provider received for one pod UID, failed calls included.
type Calls struct {
	Create, Update, Delete int
}

// Calls returns the counters for uid; the zero value if the provider never saw it. Counters
// outlive the pod, so a test can check that a UID was created once over a whole scenario.
//
// Only a provider made with Config.RecordCalls counts; Calls on any other panics, since the
// zeros it would return could make an assertion such as "never created again" pass without
// anything having been checked.
func (p *Provider) Calls(uid types.UID) Calls {
	if !p.cfg.RecordCalls {
		panic("mock: Provider.Calls without Config.RecordCalls: no call was counted; set RecordCalls in the test's mock.Config")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if c := p.calls[uid]; c != nil {
		return *c
	}
	return Calls{}
}

// countLocked returns the call counters of uid, creating them on first use; nil unless
// Config.RecordCalls.
func (p *Provider) countLocked(uid types.UID) *Calls {
	if !p.cfg.RecordCalls {
		return nil
	}
	c := p.calls[uid]
	if c == nil {
		c = &Calls{}
		p.calls[uid] = c
	}
	return c
}
