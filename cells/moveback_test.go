package cells_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// exportOf is the tenant's export in a cell, one JSON line per record, sorted.
func exportOf(t *testing.T, c *graph.Client, tenant string) []string {
	t.Helper()
	ten, err := c.Tenant(context.Background(), tenant, false)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	err = ten.Export(context.Background(), func(r knowmind.Record) error {
		b, err := json.Marshal(r)
		out = append(out, string(b))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// A tenant moved a → b, changed in b, and moved back to a holds in a exactly what it held in b:
// the copy the first move left in a is dropped, not imported over (nothing doubled, no stale
// version current again), its history (the version closed in b) is intact, a token revoked in b
// stays revoked in a, and the agent's principal is the one it had. The copy left in b is dropped
// on request, never the tenant's own namespace.
func TestMoveBackAndForth(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	r := router()
	tenant := dgraphtest.TenantName(t)
	if err := r.Place(ctx, tenant, "cell-a"); err != nil {
		t.Fatal(err)
	}
	var ids []string
	err := r.Write(ctx, tenant, func(ten *graph.Tenant) error {
		for _, w := range []string{"Hydraulikpumpe", "Foerderband", "Schaltschrank"} {
			res, err := ten.StoreMemory(ctx, knowmind.StoreMemoryInput{Title: w, Content: "Die " + w + " in Halle 3 wurde gewartet."})
			if err != nil {
				return err
			}
			ids = append(ids, res.MemoryID)
		}
		_, err := ten.Link(ctx, ids[0], ids[1], "DEPENDS_ON")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	a, b := envs["cell-a"].Client, envs["cell-b"].Client
	first, err := a.Tenant(ctx, tenant, false)
	if err != nil {
		t.Fatal(err)
	}
	firstNS := first.Namespace
	agent, agentTok, err := a.CreateToken(ctx, tenant, []knowmind.Scope{knowmind.ScopeRead, knowmind.ScopeWrite}, "agent", nil)
	if err != nil {
		t.Fatal(err)
	}
	leaver, _, err := a.CreateToken(ctx, tenant, []knowmind.Scope{knowmind.ScopeRead}, "leaver", nil)
	if err != nil {
		t.Fatal(err)
	}

	if _, err := r.Move(ctx, tenant, "cell-b", t.TempDir()); err != nil {
		t.Fatal(err)
	}
	// Changed in b: a fact updated (its first version closed), a memory added, a token revoked.
	err = r.Write(ctx, tenant, func(ten *graph.Tenant) error {
		if _, err := ten.UpdateFact(ctx, knowmind.UpdateFactInput{TargetID: ids[1], NewTitle: "Foerderband",
			NewContent: "Das Foerderband in Halle 3 wurde ersetzt.", UpdateReason: "ersetzt"}); err != nil {
			return err
		}
		_, err := ten.StoreMemory(ctx, knowmind.StoreMemoryInput{Title: "Kompressor", Content: "Der Kompressor kam nach dem Umzug dazu."})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	agentInB, err := b.VerifyToken(ctx, agent)
	if err != nil {
		t.Fatal(err)
	}
	principalInB := agentInB.Principal().TokenID
	leaverInB, err := b.VerifyToken(ctx, leaver)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.RevokeToken(ctx, leaverInB.ID); err != nil {
		t.Fatal(err)
	}
	inB := exportOf(t, b, tenant)

	rep, err := r.Move(ctx, tenant, "cell-a", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("back %s → %s: %d records, %d tokens written; read-only %s", rep.From, rep.To, rep.Records, rep.Tokens, rep.ReadOnly.Round(time.Millisecond))
	inA := exportOf(t, a, tenant)
	if !slices.Equal(inA, inB) {
		t.Errorf("after a → b → a cell a holds %d records, cell b held %d; they differ", len(inA), len(inB))
		for _, l := range inA {
			if !slices.Contains(inB, l) {
				t.Logf("only in a: %.300s", l)
			}
		}
	}
	if rep.Records != len(inB) {
		t.Errorf("the move back carried %d records, b held %d", rep.Records, len(inB))
	}
	back, err := a.Tenant(ctx, tenant, false)
	if err != nil {
		t.Fatal(err)
	}
	if back.Namespace == firstNS {
		t.Errorf("the tenant came back into its old namespace %d, not a fresh one", firstNS)
	}
	// History: the fact's first version is closed, the current one is the one written in b.
	res, err := back.Recall(ctx, knowmind.RecallQuery{Query: "Foerderband Halle 3", K: 5})
	if err != nil {
		t.Fatal(err)
	}
	foerderband := 0
	for _, h := range res.Hits {
		if h.Title == "Foerderband" {
			foerderband++
		}
	}
	if foerderband != 1 {
		t.Errorf("recall in a finds %d current versions of the updated fact, want 1: %+v", foerderband, res.Hits)
	}
	// Tokens: the agent's works with the principal it had in b (its id where it was created,
	// qualified by that cell as the service names it), the one revoked in b stays revoked.
	tok, err := a.VerifyToken(ctx, agent)
	if want := "tok:cell-a:" + agentTok.ID; err != nil || tok.Principal().TokenID != want || principalInB != want {
		t.Errorf("the agent's principal: %q in b, %q in a after the move back (%v); want %q in both", principalInB, tok.Principal().TokenID, err, want)
	}
	if _, err := a.VerifyToken(ctx, leaver); err == nil {
		t.Error("the token revoked in b works in a after the move back")
	}

	// The copy in b goes on request; the tenant's own namespace never does.
	if err := r.DropCopy(ctx, tenant, "cell-a"); err == nil {
		t.Fatal("DropCopy dropped the cell the tenant lives in")
	}
	if err := r.DropCopy(ctx, tenant, "cell-b"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Tenant(ctx, tenant, false); knowmind.ErrorCode(err) != knowmind.ENOTFOUND {
		t.Errorf("the tenant in b after its copy was dropped: %v, want not found", err)
	}
	if got := exportOf(t, a, tenant); !slices.Equal(got, inB) {
		t.Errorf("cell a changed when b's copy was dropped: %d records", len(got))
	}
}
