// Package nodecondition is how a part of a provider that computes some of the Node's conditions
// (lifecycle/health's Ready, eviction's MemoryPressure, DiskPressure and PIDPressure) measures
// them and reports them: the provider.NodeProvider's NotifyNodeStatus half.
//
// A Reporter holds the callback NotifyNodeStatus registered and passes it a Node holding the
// conditions whenever they differ from the last passed, one report at a time, so that the
// callback sees them in the order they were computed. Every runs the measurement that computes
// them at once and then every period, on a clock that tests can fake.
//
// It imports only the API types and the clock: eviction, on the layer just above, uses it.
//
//	type Monitor struct{ conditions nodecondition.Reporter; ... }
//
//	func (m *Monitor) NotifyNodeStatus(_ context.Context, cb func(*corev1.Node)) {
//		m.conditions.Register(cb)
//		m.report()
//	}
//
//	func (m *Monitor) report() { m.conditions.Report(m.current, nil) }
//
//	func (m *Monitor) Run(ctx context.Context) error {
//		return nodecondition.Every(ctx, m.clock, m.period, func(ctx context.Context) bool {
//			m.measure(ctx)
//			m.report()
//			return false
//		})
//	}
package nodecondition
