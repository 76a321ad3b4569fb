package handlers

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/knowmind/knowmind"
)

func (c *engineClient) briefing(args map[string]any) knowmind.Briefing {
	c.t.Helper()
	var res knowmind.Briefing
	structured(c.t, callTool(c.t, c.url, c.read, "knowmind_briefing", args), &res)
	if res.Mode != knowmind.BriefingExtractive || !strings.Contains(res.Note, "extractive") || res.Sections == nil {
		c.t.Fatalf("briefing mode %q note %q", res.Mode, res.Note)
	}
	return res
}

func section(b knowmind.Briefing, kind string) *knowmind.BriefingSection {
	for i := range b.Sections {
		if b.Sections[i].Kind == kind {
			return &b.Sections[i]
		}
	}
	return nil
}

// A due goal, a fired goal, an open conflict, an open draft and current
// memories appear in their sections citing their ids; since, entity and the
// token budget narrow it.
func TestBriefingThroughMCP(t *testing.T) {
	c := newEngineClient(t, Extractors{})
	due := c.setGoal(map[string]any{"text": "send the quarterly report", "due_at": time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)})
	c.setGoal(map[string]any{"text": "not yet", "due_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
	acme := c.setGoal(map[string]any{"text": "watch Acme deliveries", "trigger": map[string]any{"entity": map[string]any{"type": "organisation", "name": "Acme GmbH"}}})

	first := c.capture(map[string]any{"text": "Die Acme GmbH liefert die Server bis zum 15. Mai."})
	second := c.capture(map[string]any{"text": "Update: Die Acme GmbH liefert die Server bis zum 30. Juni."})
	if len(first.Stored) != 1 || len(second.Stored) != 1 || len(second.Conflicts) != 1 || len(first.PMMatches) != 1 {
		t.Fatalf("captures: %+v / %+v", first, second)
	}
	draft := c.capture(map[string]any{"text": "Lisa Müller zieht am 1. März nach Hamburg."})
	if len(draft.Drafts) != 1 {
		t.Fatalf("draft capture %+v", draft)
	}
	plain := c.store("Kantine", "Die Kantine schließt freitags um 14 Uhr.")

	b := c.briefing(map[string]any{})
	if s := section(b, knowmind.SectionDueGoals); s == nil || len(s.Items) != 1 || s.Items[0].GoalID != due.ID {
		t.Fatalf("due goals section %+v", s)
	}
	s := section(b, knowmind.SectionFiredGoals)
	if s == nil || len(s.Items) != 1 || s.Items[0].GoalID != acme.ID || len(s.Items[0].MemoryIDs) != 2 {
		t.Fatalf("fired goals section %+v", s)
	}
	s = section(b, knowmind.SectionConflicts)
	want := []string{first.Stored[0].ID, second.Stored[0].ID}
	slices.Sort(want)
	if s == nil || len(s.Items) != 1 || !slices.Equal(s.Items[0].MemoryIDs, want) {
		t.Fatalf("conflicts section %+v, want ids %v", s, want)
	}
	if s = section(b, knowmind.SectionDrafts); s == nil || len(s.Items) != 1 || s.Items[0].DraftID != draft.Drafts[0].ID {
		t.Fatalf("drafts section %+v", s)
	}
	s = section(b, knowmind.SectionMemories)
	if s == nil || len(s.Items) != 3 || s.Items[0].MemoryIDs[0] != plain || !strings.Contains(b.Text, "[memory "+plain+"]") {
		t.Fatalf("memories section %+v text %s", s, b.Text)
	}
	if b.Truncated || b.Tokens == 0 || b.Tokens > b.MaxTokens {
		t.Fatalf("tokens %d of %d, truncated %v", b.Tokens, b.MaxTokens, b.Truncated)
	}

	// About the entity: its memories and goals, not the canteen nor the draft about Lisa.
	b = c.briefing(map[string]any{"entity": map[string]any{"type": "organisation", "id": "acme-gmbh"}})
	if s := section(b, knowmind.SectionMemories); s == nil || len(s.Items) != 2 {
		t.Fatalf("entity memories %+v", s)
	}
	if section(b, knowmind.SectionDrafts) != nil || section(b, knowmind.SectionConflicts) == nil || section(b, knowmind.SectionDueGoals) == nil {
		t.Fatalf("entity briefing sections %+v", b.Sections)
	}

	// Since later than everything: only the due goal remains.
	b = c.briefing(map[string]any{"since": time.Now().Add(time.Minute).UTC().Format(time.RFC3339)})
	if len(b.Sections) != 1 || b.Sections[0].Kind != knowmind.SectionDueGoals {
		t.Fatalf("since-future briefing %+v", b.Sections)
	}

	// A small budget keeps the first items and counts the rest as omitted.
	b = c.briefing(map[string]any{"max_tokens": 100})
	omitted := 0
	for _, s := range b.Sections {
		omitted += s.Omitted
	}
	if !b.Truncated || omitted == 0 || b.Tokens > 100 || section(b, knowmind.SectionDueGoals) == nil || len(section(b, knowmind.SectionDueGoals).Items) != 1 {
		t.Fatalf("budget 100: tokens %d omitted %d sections %+v", b.Tokens, omitted, b.Sections)
	}

	for _, tc := range []struct {
		args  map[string]any
		param string
	}{
		{map[string]any{"since": "yesterday"}, "since"},
		{map[string]any{"max_tokens": 99}, "max_tokens"},
		{map[string]any{"max_tokens": 20001}, "max_tokens"},
		{map[string]any{"entity": map[string]any{"type": "person"}}, "entity"},
		{map[string]any{"mode": "llm"}, "mode"},
	} {
		wantRPCError(t, callTool(t, c.url, c.read, "knowmind_briefing", tc.args), -32602, tc.param)
	}
}
