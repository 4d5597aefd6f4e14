package lifecycle

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	clocktesting "k8s.io/utils/clock/testing"
)

// enforcing is a Runtime that says whether it enforces limits.
type enforcing struct {
	*fakeRuntime
	enforced bool
}

func (e enforcing) EnforcesLimits() (bool, string) {
	return e.enforced, "cgroups cannot be used: the agent is not root"
}

// A pod with limits is warned only on a runtime that says it cannot enforce them, with its
// reason; a runtime that says nothing (CRI) enforces them.
func TestLimitsNotEnforced(t *testing.T) {
	limited := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
		Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("48Mi")}}}}}}
	plain := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}}
	fake := newFakeRuntime(clocktesting.NewFakePassiveClock(time.Unix(0, 0)))

	assert.Equal(t, "resources.limits are not enforced on this node: its containers run without cgroup limits (cgroups cannot be used: the agent is not root)",
		limitsNotEnforced(enforcing{fake, false}, limited))
	assert.Empty(t, limitsNotEnforced(enforcing{fake, false}, plain), "no limits, nothing to warn of")
	assert.Empty(t, limitsNotEnforced(enforcing{fake, true}, limited))
	assert.Empty(t, limitsNotEnforced(fake, limited), "a runtime that says nothing enforces them")
}
