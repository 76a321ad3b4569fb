package knowmind

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestGoalIndexMatch(t *testing.T) {
	now := time.Now()
	past := now.Add(-time.Minute)
	ix := NewGoalIndex([]Goal{
		{ID: "w", Status: GoalOpen, Trigger: &GoalTrigger{Words: []string{"budget", "Q3"}}},
		{ID: "e", Status: GoalOpen, Trigger: &GoalTrigger{Entity: &EntityRef{Type: "person", ID: "lisa-mueller"}, Category: "hr"}},
		{ID: "t", Status: GoalOpen, Trigger: &GoalTrigger{Tags: []string{"security", "ops"}}},
		{ID: "closed", Status: GoalDone, Trigger: &GoalTrigger{Words: []string{"budget"}}},
		{ID: "expired", Status: GoalOpen, ExpiresAt: &past, Trigger: &GoalTrigger{Words: []string{"budget"}}},
		{ID: "time", Status: GoalOpen},
	}, now)
	if ix.Len() != 3 {
		t.Fatalf("indexed %d goals, want 3", ix.Len())
	}
	ids := func(ms []GoalMatch) string {
		var s []string
		for _, m := range ms {
			s = append(s, m.GoalID)
		}
		return strings.Join(s, ",")
	}
	for _, tc := range []struct {
		m    WrittenMemory
		want string
	}{
		{WrittenMemory{ID: "1", Text: "The Q3 budget grew."}, "w"},
		{WrittenMemory{ID: "2", Text: "The budget grew."}, ""},
		{WrittenMemory{ID: "3", Text: "budgetary Q3"}, ""},
		{WrittenMemory{ID: "4", Text: "x", Entities: []EntityRef{{Type: "person", ID: "lisa-mueller"}}}, ""},
		{WrittenMemory{ID: "5", Text: "x", Category: "hr", Entities: []EntityRef{{Type: "person", ID: "lisa-mueller"}}}, "e"},
		{WrittenMemory{ID: "6", Text: "x", Tags: []string{"OPS"}}, "t"},
	} {
		if got := ids(ix.Match(tc.m, now)); got != tc.want {
			t.Errorf("memory %s fired %q, want %q", tc.m.ID, got, tc.want)
		}
	}
}

// Workload: matching one 30-word memory against 5,000 open event goals laid out
// as in handlers' BenchmarkStoreWithGoals (~200 candidates checked, none fire).
// Run: go test . -run '^$' -bench GoalIndex
func BenchmarkGoalIndexMatch5000(b *testing.B) {
	now := time.Now()
	var goals []Goal
	for i := range 5000 {
		goals = append(goals, Goal{ID: fmt.Sprint(i), Status: GoalOpen,
			Trigger: &GoalTrigger{Words: []string{fmt.Sprintf("w%d", i%500), fmt.Sprintf("never%d", i)}}})
	}
	ix := NewGoalIndex(goals, now)
	var words []string
	for k := range 20 {
		words = append(words, fmt.Sprintf("w%d", k*11))
	}
	m := WrittenMemory{ID: "m", Text: "memory about " + strings.Join(words, " ")}
	for b.Loop() {
		if len(ix.Match(m, now)) != 0 {
			b.Fatal("fired")
		}
	}
}

// A goal or draft record is checked once, by its Validate method, naming the record.
func TestGoalAndDraftValidate(t *testing.T) {
	due := time.Now()
	ok := Goal{ID: "g1", Text: "Angebot nachfassen", Status: GoalOpen, Kind: GoalTime, DueAt: &due}
	if err := ok.Validate(); err != nil {
		t.Fatalf("a valid goal: %v", err)
	}
	for _, g := range []Goal{{}, {ID: "g1", Text: "x", Status: "later", Kind: GoalTime, DueAt: &due},
		{ID: "g1", Text: "x", Status: GoalOpen, Kind: GoalTime}, {ID: "g1", Text: "x", Status: GoalOpen, Kind: GoalEvent}} {
		if e := AsError(g.Validate()); e == nil || e.Code != EINVALID {
			t.Errorf("goal %+v: %v, want EINVALID", g, e)
		}
	}
	d := Draft{ID: "d1", Text: "Kunde zahlt per Lastschrift", Status: DraftOpen, Confidence: 0.6}
	if err := d.Validate(); err != nil {
		t.Fatalf("a valid draft: %v", err)
	}
	d.Confidence = 1.5
	if e := AsError(d.Validate()); e == nil || e.Code != EINVALID {
		t.Errorf("confidence 1.5: %v, want EINVALID", e)
	}
}
