package knowmind

import "testing"

func TestThresholdsRoute(t *testing.T) {
	th := Thresholds{Store: DefaultStoreThreshold, Draft: DefaultDraftThreshold}
	for c, want := range map[float64]string{0.95: RouteStored, 0.85: RouteStored, 0.849: RouteDraft, 0.40: RouteDraft, 0.39: RouteDropped} {
		if got := th.Route(c); got != want {
			t.Errorf("Route(%v) = %s, want %s", c, got, want)
		}
	}
}

func TestCalibrate(t *testing.T) {
	base := Thresholds{Store: 0.85, Draft: 0.40}
	rec := func(from float64, acc, rej int) (int, CalibrationBucket) {
		return Bucket(from), CalibrationBucket{From: from, Accepted: acc, Rejected: rej}
	}
	tests := []struct {
		name    string
		buckets [][3]float64 // from, accepted, rejected
		want    Thresholds
	}{
		{"no reviews", nil, base},
		{"too few reviews", [][3]float64{{0.80, 19, 0}}, base},
		{"accepted 17 of 20", [][3]float64{{0.80, 17, 3}}, base},
		{"accepted 18 of 20 (exactly 90 %)", [][3]float64{{0.80, 18, 2}}, Thresholds{Store: 0.80, Draft: 0.40}},
		{"two buckets down", [][3]float64{{0.80, 20, 0}, {0.75, 30, 1}}, Thresholds{Store: 0.75, Draft: 0.40}},
		{"a gap stops the walk", [][3]float64{{0.80, 20, 0}, {0.70, 20, 0}}, Thresholds{Store: 0.80, Draft: 0.40}},
		{"rejected bucket raises the floor", [][3]float64{{0.40, 1, 19}, {0.45, 0, 25}}, Thresholds{Store: 0.85, Draft: 0.50}},
	}
	for _, tt := range tests {
		m := map[int]CalibrationBucket{}
		for _, b := range tt.buckets {
			k, v := rec(b[0], int(b[1]), int(b[2]))
			m[k] = v
		}
		if got := Calibrate(base, m); got != tt.want {
			t.Errorf("%s: Calibrate = %+v, want %+v", tt.name, got, tt.want)
		}
	}
	// 20 accepted, 3 of its direct stores superseded: 20/23 < 90 %, back to drafts.
	m := map[int]CalibrationBucket{Bucket(0.80): {Accepted: 20}, Bucket(0.75): {Accepted: 20, Superseded: 3}}
	if got := Calibrate(base, m); got.Store != 0.80 {
		t.Errorf("superseded: Calibrate = %+v, want store 0.80", got)
	}
	if Bucket(0.82) != 16 || Bucket(0.80) != 16 || Bucket(0.7999) != 15 {
		t.Errorf("buckets: %d %d %d", Bucket(0.82), Bucket(0.80), Bucket(0.7999))
	}
}
