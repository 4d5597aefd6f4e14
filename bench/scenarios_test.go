package bench

import "testing"

func TestScenarioNames(t *testing.T) {
	all := Scenarios()
	names := ScenarioNames(false)
	if len(names) != len(all) {
		t.Errorf("ScenarioNames(false) = %v, but Scenarios() has %d", names, len(all))
	}
	for _, n := range names {
		if _, ok := all[n]; !ok {
			t.Errorf("ScenarioNames lists %q, which Scenarios() lacks", n)
		}
	}
	quick := map[string]bool{}
	for _, n := range ScenarioNames(true) {
		quick[n] = true
		if !all[n].Quick {
			t.Errorf("%q is not Quick but ScenarioNames(true) lists it", n)
		}
	}
	for _, n := range []string{"process-100", "api-1k", "static-1k", "api-latency"} {
		if !quick[n] {
			t.Errorf("make bench (quick) should run %q: %v", n, ScenarioNames(true))
		}
	}
}
