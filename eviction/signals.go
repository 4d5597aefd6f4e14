package eviction

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Signal is an eviction signal, named as the kubelet names it.
type Signal string

// The signals this package measures.
const (
	SignalMemoryAvailable   Signal = "memory.available"
	SignalNodeFsAvailable   Signal = "nodefs.available"
	SignalNodeFsInodesFree  Signal = "nodefs.inodesFree"
	SignalImageFsAvailable  Signal = "imagefs.available"
	SignalImageFsInodesFree Signal = "imagefs.inodesFree"
	SignalPIDAvailable      Signal = "pid.available"
)

// Resources a signal's pressure is of, besides memory and ephemeral storage.
const (
	resourceInodes corev1.ResourceName = "inodes"
	resourcePIDs   corev1.ResourceName = "pids"
)

// signalToNodeCondition is the node condition a met threshold of the signal sets.
var signalToNodeCondition = map[Signal]corev1.NodeConditionType{
	SignalMemoryAvailable:   corev1.NodeMemoryPressure,
	SignalNodeFsAvailable:   corev1.NodeDiskPressure,
	SignalNodeFsInodesFree:  corev1.NodeDiskPressure,
	SignalImageFsAvailable:  corev1.NodeDiskPressure,
	SignalImageFsInodesFree: corev1.NodeDiskPressure,
	SignalPIDAvailable:      corev1.NodePIDPressure,
}

// signalToResource is the resource a signal measures.
var signalToResource = map[Signal]corev1.ResourceName{
	SignalMemoryAvailable:   corev1.ResourceMemory,
	SignalNodeFsAvailable:   corev1.ResourceEphemeralStorage,
	SignalNodeFsInodesFree:  resourceInodes,
	SignalImageFsAvailable:  corev1.ResourceEphemeralStorage,
	SignalImageFsInodesFree: resourceInodes,
	SignalPIDAvailable:      resourcePIDs,
}

// ThresholdValue is a quantity, or a percentage of the signal's capacity (0 to 1) when
// Quantity is nil.
type ThresholdValue struct {
	Quantity   *resource.Quantity
	Percentage float32
}

// Threshold is one eviction threshold: met when Signal's available quantity is less than
// Value. GracePeriod is zero for a hard threshold; MinReclaim is how far above Value the
// signal must come back before the threshold is resolved.
type Threshold struct {
	Signal      Signal
	Value       ThresholdValue
	GracePeriod time.Duration
	MinReclaim  *ThresholdValue
}

// quantity is v of capacity, as the kubelet's GetThresholdQuantity.
func (v ThresholdValue) quantity(capacity *resource.Quantity) *resource.Quantity {
	if v.Quantity != nil {
		q := v.Quantity.DeepCopy()
		return &q
	}
	return resource.NewQuantity(int64(float64(capacity.Value())*float64(v.Percentage)), resource.BinarySI)
}

// String is the threshold as the kubelet's formatThreshold writes it.
func (t Threshold) String() string {
	v := ""
	if t.Value.Quantity != nil {
		v = t.Value.Quantity.String()
	} else {
		v = formatPercentage(t.Value.Percentage)
	}
	return string(t.Signal) + "<" + v
}

// Observation is a signal's measurement: what is available of its capacity, when.
type Observation struct {
	Available *resource.Quantity
	Capacity  *resource.Quantity
	Time      time.Time
}

// Observations are the signals measured at one housekeeping.
type Observations map[Signal]Observation
