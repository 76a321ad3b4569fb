package handlers

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/conflict/evalset"
)

// TestBenchConflicts is make bench-conflicts: the conflict evaluation set
// through the MCP endpoint on a real Dgraph. Each distinct old fact is stored
// with plain knowmind_store_memory (no entities) in two tenants; then each
// pair's new fact is sent with knowmind_capture to the first tenant and with
// knowmind_store_memory to the second. A pair counts as found when the answer
// lists its old fact among conflicts. The tenants keep every fact of the set
// (and the new facts as they are stored), so a new fact's candidates are
// chosen among over a hundred memories, many of them about the same
// organisations, people and projects.
func TestBenchConflicts(t *testing.T) {
	if os.Getenv("KNOWMIND_BENCH_CONFLICTS") == "" {
		t.Skip("set KNOWMIND_BENCH_CONFLICTS=1 (make bench-conflicts)")
	}
	pairs, err := evalset.Load("../conflict/testdata/eval.tsv")
	if err != nil {
		t.Fatal(err)
	}
	capture, store := newEngineClient(t, Extractors{}), newEngineClient(t, Extractors{})
	oldIDs := [2]map[string]string{{}, {}}
	for _, p := range pairs {
		for i, c := range []*engineClient{capture, store} {
			if _, ok := oldIDs[i][p.Old]; !ok {
				oldIDs[i][p.Old] = c.store("", p.Old)
			}
		}
	}
	var byCapture, byStore evalset.Score
	others := [2]int{}
	for _, p := range pairs {
		// tally counts the pair as found when conflicts name its old fact, and the others apart.
		tally := func(mode string, conflicts []knowmind.Conflict, oldID string, score *evalset.Score, others *int) {
			found := false
			for _, c := range conflicts {
				if c.ExistingID == oldID {
					found = true
				} else {
					*others++
					t.Logf("%s: other conflict %q -> %q (%s)", mode, c.ExistingText, p.New, c.Reason)
				}
			}
			score.Add(p, found)
			if found != p.Conflict() {
				t.Logf("%s %s %s: found %v: %q -> %q", mode, p.Kind, p.Lang, found, p.Old, p.New)
			}
		}
		res := capture.capture(map[string]any{"text": p.New})
		tally("capture", res.Conflicts, oldIDs[0][p.Old], &byCapture, &others[0])
		var sr knowmind.StoreResult
		structured(t, callTool(t, store.url, store.write, "knowmind_store_memory",
			map[string]any{"content": p.New}), &sr)
		tally("store_memory", sr.Conflicts, oldIDs[1][p.Old], &byStore, &others[1])
	}
	var b strings.Builder
	byCapture.Write(&b, "knowmind_capture (rules extractor), old fact stored without entities: pairs found / pairs")
	b.WriteString("\n")
	byStore.Write(&b, "knowmind_store_memory, old fact stored without entities: pairs found / pairs")
	b.WriteString("\n")
	fmt.Fprintf(&b, "conflicts reported with other memories of the tenant: capture %d, store_memory %d\n", others[0], others[1])
	os.Stdout.WriteString(b.String())
}
