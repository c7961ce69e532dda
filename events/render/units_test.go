package render

import "testing"

func TestMoney(t *testing.T) {
	for in, want := range map[float64]string{0: "$0", 0.00014: "$0.00014", 0.00042000000000000002: "$0.00042", 0.0123: "$0.012", 0.25: "$0.25", 1.5: "$1.50", 12.345: "$12.35", 0.000001234: "$0.0000012"} {
		if got := Money(in); got != want {
			t.Errorf("Money(%v) = %s, want %s", in, got, want)
		}
	}
}
