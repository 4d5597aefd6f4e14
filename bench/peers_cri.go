package bench

// criPeerMetrics are cri-50's rows of the side-by-side table besides peerMetrics: the
// container runtime's cost beside the agent's, the quiet window and the removal down to an
// empty containerd (the kubelet removes sandboxes only in its once-a-minute garbage
// collection, so "shims gone" is the comparable figure for how fast pods stop). Lower is
// better for all.
func criPeerMetrics() []peerMetric {
	cri := func(get func(*Result, *CRIResult) float64) func(*Result) float64 {
		return func(r *Result) float64 {
			if r.CRI == nil {
				return 0
			}
			return get(r, r.CRI)
		}
	}
	return []peerMetric{
		{"start p50 s", func(r *Result) float64 { return r.StartLatency.P50 }},
		{"agent CPU s (start)", func(r *Result) float64 { return r.StartCPUSeconds }},
		{"containerd+shims CPU s (start)", cri(func(_ *Result, c *CRIResult) float64 {
			return c.StartContainerdCPUSeconds + c.StartShimCPUSeconds
		})},
		{"quiet: agent CPU %", func(r *Result) float64 {
			if r.Idle == nil {
				return 0
			}
			return r.Idle.CPUPercent
		}},
		{"quiet: containerd+shims CPU %", cri(func(_ *Result, c *CRIResult) float64 {
			return c.QuietContainerdCPUPercent + c.QuietShimCPUPercent
		})},
		{"quiet: agent RSS MB", cri(func(_ *Result, c *CRIResult) float64 { return c.AgentRSSMB })},
		{"quiet: containerd RSS MB", cri(func(_ *Result, c *CRIResult) float64 { return c.ContainerdRSSMB })},
		{"quiet: shims Pss MB", cri(func(_ *Result, c *CRIResult) float64 { return c.ShimPssSumMB })},
		{"removed: shims gone s", cri(func(_ *Result, c *CRIResult) float64 { return c.ShimsGoneSeconds })},
		{"removed: containerd empty s", cri(func(_ *Result, c *CRIResult) float64 { return c.ContainersGoneSeconds })},
	}
}

// peerMetricsOf are the rows of one scenario's side-by-side table: peerMetrics, and
// criPeerMetrics when its runs measured a container runtime.
func peerMetricsOf(runs peerRuns) []peerMetric {
	for _, rs := range runs {
		for _, r := range rs {
			if r.CRI != nil {
				return append(peerMetrics(), criPeerMetrics()...)
			}
		}
	}
	return peerMetrics()
}
