package eviction

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

// DefaultEvictionHard are the kubelet's hard thresholds on Linux, used when neither
// --eviction-hard nor its KubeletConfiguration field says otherwise.
var DefaultEvictionHard = map[string]string{
	"memory.available":   "100Mi",
	"nodefs.available":   "10%",
	"nodefs.inodesFree":  "5%",
	"imagefs.available":  "15%",
	"imagefs.inodesFree": "5%",
}

// DefaultPressureTransitionPeriod is the kubelet's evictionPressureTransitionPeriod.
const DefaultPressureTransitionPeriod = 5 * time.Minute

// ParseThresholdConfig parses the kubelet's eviction settings, as its ParseThresholdConfig:
// evictionHard and evictionSoft map a signal to a quantity or a percentage ("0%" and "100%"
// disable the signal), evictionSoftGracePeriod a soft signal to its grace period (required for
// each), evictionMinimumReclaim a signal to its minimum reclaim. Errors name the signal with
// the kubelet's words.
func ParseThresholdConfig(evictionHard, evictionSoft, evictionSoftGracePeriod, evictionMinimumReclaim map[string]string) ([]Threshold, error) {
	var results []Threshold
	hard, err := parseThresholdStatements(evictionHard)
	if err != nil {
		return nil, err
	}
	results = append(results, hard...)
	soft, err := parseThresholdStatements(evictionSoft)
	if err != nil {
		return nil, err
	}
	gracePeriods, err := parseGracePeriods(evictionSoftGracePeriod)
	if err != nil {
		return nil, err
	}
	minReclaims, err := parseMinimumReclaims(evictionMinimumReclaim)
	if err != nil {
		return nil, err
	}
	for i := range soft {
		period, ok := gracePeriods[soft[i].Signal]
		if !ok {
			return nil, fmt.Errorf("grace period must be specified for the soft eviction threshold %v", soft[i].Signal)
		}
		soft[i].GracePeriod = period
	}
	results = append(results, soft...)
	for i := range results {
		if r, ok := minReclaims[results[i].Signal]; ok {
			results[i].MinReclaim = &r
		}
	}
	return results, nil
}

func validSignal(s Signal) bool {
	_, ok := signalToResource[s]
	return ok
}

func unsupported(s Signal) error { return fmt.Errorf("unsupported eviction signal %v", s) }

// parseThresholdStatements parses statements in the order of their signals' names, so that
// the thresholds (and errors) do not depend on a map's order.
func parseThresholdStatements(statements map[string]string) ([]Threshold, error) {
	var results []Threshold
	for _, signal := range sortedKeys(statements) {
		t, err := parseThresholdStatement(Signal(signal), statements[signal])
		if err != nil {
			return nil, err
		}
		if t != nil {
			results = append(results, *t)
		}
	}
	return results, nil
}

func parseThresholdStatement(signal Signal, val string) (*Threshold, error) {
	if !validSignal(signal) {
		return nil, unsupported(signal)
	}
	if strings.HasSuffix(val, "%") {
		if val == "0%" || val == "100%" {
			return nil, nil // the kubelet's way to turn a default threshold off
		}
		p, err := parsePercentage(val)
		if err != nil {
			return nil, err
		}
		if p < 0 {
			return nil, fmt.Errorf("eviction percentage threshold %v must be >= 0%%: %s", signal, val)
		}
		if p > 1 {
			return nil, fmt.Errorf("eviction percentage threshold %v must be <= 100%%: %s", signal, val)
		}
		return &Threshold{Signal: signal, Value: ThresholdValue{Percentage: p}}, nil
	}
	q, err := resource.ParseQuantity(val)
	if err != nil {
		return nil, fmt.Errorf("eviction threshold %v: %w", signal, err)
	}
	if q.Sign() <= 0 {
		return nil, fmt.Errorf("eviction threshold %v must be positive: %s", signal, &q)
	}
	return &Threshold{Signal: signal, Value: ThresholdValue{Quantity: &q}}, nil
}

func parsePercentage(input string) (float32, error) {
	v, err := strconv.ParseFloat(strings.TrimRight(input, "%"), 32)
	if err != nil {
		return 0, err
	}
	return float32(v) / 100, nil
}

func formatPercentage(p float32) string {
	s := strconv.FormatFloat(float64(p)*100, 'f', 4, 64) // a float32's noise left out
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s + "%"
}

func parseGracePeriods(statements map[string]string) (map[Signal]time.Duration, error) {
	results := map[Signal]time.Duration{}
	for signal, val := range statements {
		s := Signal(signal)
		if !validSignal(s) {
			return nil, unsupported(s)
		}
		d, err := time.ParseDuration(val)
		if err != nil {
			return nil, err
		}
		if d < 0 {
			return nil, fmt.Errorf("invalid eviction grace period specified: %v, must be a positive value", val)
		}
		results[s] = d
	}
	return results, nil
}

func parseMinimumReclaims(statements map[string]string) (map[Signal]ThresholdValue, error) {
	results := map[Signal]ThresholdValue{}
	for signal, val := range statements {
		s := Signal(signal)
		if !validSignal(s) {
			return nil, unsupported(s)
		}
		if strings.HasSuffix(val, "%") {
			p, err := parsePercentage(val)
			if err != nil {
				return nil, err
			}
			if p <= 0 {
				return nil, fmt.Errorf("eviction percentage minimum reclaim %v must be positive: %s", s, val)
			}
			results[s] = ThresholdValue{Percentage: p}
			continue
		}
		q, err := resource.ParseQuantity(val)
		if err != nil {
			return nil, err
		}
		if q.Sign() < 0 {
			return nil, fmt.Errorf("negative eviction minimum reclaim specified for %v", s)
		}
		results[s] = ThresholdValue{Quantity: &q}
	}
	return results, nil
}
