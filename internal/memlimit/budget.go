package memlimit

// Base and PerPod make up the automatic limit: the agent's own memory with no pods, and about
// 1.7 times what a pod costs it live — its API object, the pod manager's and the provider's
// state, status writes and events in flight: about 12 KiB with the mock provider at 10,000
// pods. Not less, because a limit near the live heap costs far more CPU than it saves memory:
// at 10,000 pods (127 MB live) a 200 MiB limit cost nothing, a 150 MiB one 5× the agent's CPU
// (docs/performance.md, "Soft memory limit").
const (
	Base   = 32 << 20
	PerPod = 20 << 10
)

// Budget is the automatic limit for a node that runs up to maxPods pods.
func Budget(maxPods int32) int64 {
	return Base + PerPod*int64(max(maxPods, 0))
}
