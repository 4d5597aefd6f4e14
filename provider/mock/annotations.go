package mock

import (
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/podutil"
)

// Annotations a pod uses to choose simulated behaviour (see the package documentation).
const (
	AnnotationPrefix           = "mock.vk-static.io/"
	CreateDelayAnnotation      = AnnotationPrefix + "create-delay"
	CreateErrorAnnotation      = AnnotationPrefix + "create-error"
	CreateErrorTimesAnnotation = AnnotationPrefix + "create-error-times"
	CreateInvalidAnnotation    = AnnotationPrefix + "create-invalid"
	DeleteDelayAnnotation      = AnnotationPrefix + "delete-delay"
	DeleteErrorAnnotation      = AnnotationPrefix + "delete-error"
	ExitCodeAnnotation         = AnnotationPrefix + "exit-code"
	RunDurationAnnotation      = AnnotationPrefix + "run-duration"

	// DeleteDelayGrace as the delete-delay value waits for the pod's whole grace period.
	DeleteDelayGrace = "grace"
)

// behaviour is what a pod's annotations ask of the simulator.
type behaviour struct {
	createDelay      time.Duration
	createError      string
	createErrorTimes int // 0: every call fails
	createInvalid    string
	deleteDelay      time.Duration
	deleteAfterGrace bool
	deleteError      string
	exitCode         int32
	runDuration      time.Duration
}

// noBehaviour is the behaviour of a pod without the annotations: the default, read-only.
var noBehaviour behaviour

// parseBehaviour reads pod's annotations. A malformed value is an error naming the annotation,
// so a test with a typo fails loudly instead of silently running the default behaviour.
func parseBehaviour(pod *corev1.Pod) (behaviour, error) {
	var b behaviour
	a := pod.Annotations
	if len(a) == 0 {
		return b, nil
	}
	var err error
	duration := func(key string) time.Duration {
		v, ok := a[key]
		if !ok || err != nil {
			return 0
		}
		d, perr := time.ParseDuration(v)
		if perr != nil || d < 0 {
			err = fmt.Errorf("annotation %s=%q: want a non-negative duration", key, v)
		}
		return d
	}
	integer := func(key string) int64 {
		v, ok := a[key]
		if !ok || err != nil {
			return 0
		}
		n, perr := strconv.ParseInt(v, 10, 32)
		if perr != nil {
			err = fmt.Errorf("annotation %s=%q: want an integer", key, v)
		}
		return n
	}
	b.createDelay = duration(CreateDelayAnnotation)
	b.createError = a[CreateErrorAnnotation]
	b.createErrorTimes = int(integer(CreateErrorTimesAnnotation))
	b.createInvalid = a[CreateInvalidAnnotation]
	if a[DeleteDelayAnnotation] == DeleteDelayGrace {
		b.deleteAfterGrace = true
	} else {
		b.deleteDelay = duration(DeleteDelayAnnotation)
	}
	b.deleteError = a[DeleteErrorAnnotation]
	b.exitCode = int32(integer(ExitCodeAnnotation))
	b.runDuration = duration(RunDurationAnnotation)
	return b, err
}

// finishesOnItsOwn reports whether the pod's containers exit after run-duration without
// being restarted.
func (b behaviour) finishesOnItsOwn(pod *corev1.Pod) bool {
	if b.runDuration <= 0 {
		return false
	}
	switch pod.Spec.RestartPolicy {
	case corev1.RestartPolicyNever:
		return true
	case corev1.RestartPolicyOnFailure:
		return b.exitCode == 0
	}
	return false
}

// shutdownDelay is how long containers keep running after DeletePod.
func (b behaviour) shutdownDelay(pod *corev1.Pod) time.Duration {
	grace := podutil.GracePeriod(pod)
	if b.deleteAfterGrace {
		return grace
	}
	return min(b.deleteDelay, grace)
}
