package conflict

import (
	"os"
	"strings"
	"testing"

	"github.com/knowmind/knowmind/conflict/evalset"
)

// TestEval scores the comparator alone on the evaluation set (the old fact
// against the new one, as graph compares a candidate) and fails below the
// precision and recall the README states.
func TestEval(t *testing.T) {
	p, r := scoreSet(t, "testdata/eval.tsv", 120)
	if p < 0.85 || r < 0.80 {
		t.Errorf("precision %.2f / recall %.2f below 0.85 / 0.80", p, r)
	}
}

// TestEvalHeldOut scores the second set, written after the grammar; it is
// reported, and fails only far below the first set's bounds.
func TestEvalHeldOut(t *testing.T) {
	p, r := scoreSet(t, "testdata/heldout.tsv", 40)
	if p < 0.75 || r < 0.5 {
		t.Errorf("precision %.2f / recall %.2f below 0.75 / 0.50", p, r)
	}
}

func scoreSet(t *testing.T, path string, minPairs int) (precision, recall float64) {
	pairs, err := evalset.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(pairs) < minPairs {
		t.Fatalf("only %d pairs", len(pairs))
	}
	var s evalset.Score
	for _, p := range pairs {
		got := len(Detect(p.New, []Fact{{ID: "old", Text: p.Old}})) > 0
		s.Add(p, got)
		if got != p.Conflict() {
			t.Logf("%s %s: got %v: %q -> %q", p.Kind, p.Lang, got, p.Old, p.New)
		}
	}
	var b strings.Builder
	s.Write(&b, path+": comparator alone (conflict.Detect), pairs found / pairs")
	t.Log("\n" + b.String())
	if os.Getenv("KNOWMIND_EVAL_PRINT") != "" {
		os.Stdout.WriteString(b.String())
	}
	return s.PrecisionRecall("")
}
