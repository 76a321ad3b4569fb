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
		res := capture.capture(map[string]any{"text": p.New})
		found := false
		for _, c := range res.Conflicts {
			if c.ExistingID == oldIDs[0][p.Old] {
				found = true
			} else {
				others[0]++
				t.Logf("capture: other conflict %q -> %q (%s)", c.ExistingText, p.New, c.Reason)
			}
		}
		byCapture.Add(p, found)
		if found != p.Conflict() {
			t.Logf("capture %s %s: found %v: %q -> %q", p.Kind, p.Lang, found, p.Old, p.New)
		}

		var sr knowmind.StoreResult
		structured(t, callTool(t, store.url, store.write, "knowmind_store_memory",
			map[string]any{"content": p.New}), &sr)
		found = false
		for _, c := range sr.Conflicts {
			if c.ExistingID == oldIDs[1][p.Old] {
				found = true
			} else {
				others[1]++
				t.Logf("store_memory: other conflict %q -> %q (%s)", c.ExistingText, p.New, c.Reason)
			}
		}
		byStore.Add(p, found)
		if found != p.Conflict() {
			t.Logf("store_memory %s %s: found %v: %q -> %q", p.Kind, p.Lang, found, p.Old, p.New)
		}
	}
	var b strings.Builder
	byCapture.Write(&b, "knowmind_capture (rules extractor), old fact stored without entities: pairs found / pairs")
	b.WriteString("\n")
	byStore.Write(&b, "knowmind_store_memory, old fact stored without entities: pairs found / pairs")
	b.WriteString("\n")
	fmt.Fprintf(&b, "conflicts reported with other memories of the tenant: capture %d, store_memory %d\n", others[0], others[1])
	os.Stdout.WriteString(b.String())
}
