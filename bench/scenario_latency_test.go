package bench

import "testing"

func TestSpreadIndexVisitsEveryPodOnce(t *testing.T) {
	for _, n := range []int{1, 2, 10, 1000, 7919, 10000} {
		seen := make(map[int]bool, n)
		for i := range n {
			j := spreadIndex(i, n)
			if j < 0 || j >= n {
				t.Fatalf("n=%d: spreadIndex(%d) = %d, out of range", n, i, j)
			}
			if seen[j] {
				t.Fatalf("n=%d: spreadIndex(%d) = %d again before every pod was visited", n, i, j)
			}
			seen[j] = true
		}
	}
	if a, b := spreadIndex(0, 1000), spreadIndex(1, 1000); b-a < 100 && a-b < 100 {
		t.Errorf("consecutive rounds hit neighbouring pods %d and %d", a, b)
	}
}
