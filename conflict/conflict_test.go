package conflict

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

// TestPairs measures the detector on testdata/pairs.tsv (German and English
// pairs labelled conflict or none) and fails below the precision and recall
// the README states.
func TestPairs(t *testing.T) {
	f, err := os.Open("testdata/pairs.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var tp, fp, fn, tn int
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		cols := strings.Split(line, "\t")
		if len(cols) != 3 {
			t.Fatalf("bad line %q", line)
		}
		want := cols[0] == "conflict"
		got, reason := Contradicts(cols[2], cols[1])
		switch {
		case got && want:
			tp++
		case got && !want:
			fp++
			t.Logf("false conflict: %q vs %q (%s)", cols[1], cols[2], reason)
		case !got && want:
			fn++
			t.Logf("missed conflict: %q vs %q", cols[1], cols[2])
		default:
			tn++
		}
		if got != want {
			continue
		}
		if back, _ := Contradicts(cols[1], cols[2]); back != got {
			t.Errorf("not symmetric: %q vs %q", cols[1], cols[2])
		}
	}
	if tp+fp+fn+tn < 20 {
		t.Fatalf("only %d pairs", tp+fp+fn+tn)
	}
	precision := float64(tp) / float64(max(1, tp+fp))
	recall := float64(tp) / float64(max(1, tp+fn))
	t.Logf("pairs %d: tp %d fp %d fn %d tn %d, precision %.2f recall %.2f", tp+fp+fn+tn, tp, fp, fn, tn, precision, recall)
	if precision < 0.85 || recall < 0.75 {
		t.Fatalf("precision %.2f / recall %.2f below 0.85 / 0.75", precision, recall)
	}
}

func TestDetectReasons(t *testing.T) {
	got := Detect("Das Budget beträgt 60.000 Euro.", []Fact{
		{ID: "a", Text: "Das Budget beträgt 50.000 Euro."},
		{ID: "b", Text: "Das Budget wurde im März freigegeben."},
	})
	if len(got) != 1 || got[0].ExistingID != "a" || !strings.Contains(got[0].Reason, "60000 vs 50000") {
		t.Fatalf("findings %+v", got)
	}
}
