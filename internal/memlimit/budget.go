package memlimit

// Base and PerPod make up the automatic limit: the agent's own memory with no pods, and what a
// pod costs it — its API object, the pod manager's and the provider's state, status writes and
// events in flight. Measured with the mock provider: about 12 KiB per pod live at 10,000 pods
// (docs/performance.md).
const (
	Base   = 32 << 20
	PerPod = 12 << 10
)

// Budget is the automatic limit for a node that runs up to maxPods pods.
func Budget(maxPods int32) int64 {
	return Base + PerPod*int64(max(maxPods, 0))
}
