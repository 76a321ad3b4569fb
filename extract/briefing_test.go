package extract

import (
	"context"
	"strings"
	"testing"

	"github.com/knowmind/knowmind"
)

func testBriefing() knowmind.Briefing {
	return knowmind.Briefing{Mode: knowmind.BriefingExtractive, MaxTokens: 200, Text: "## Memories\n- Acme delivers in June [memory m-1]\n",
		Sections: []knowmind.BriefingSection{{Kind: knowmind.SectionMemories, Items: []knowmind.BriefingItem{
			{Text: "Acme delivers in June", MemoryIDs: []string{"m-1"}}}}, {Kind: knowmind.SectionDueGoals, Items: []knowmind.BriefingItem{
			{Text: "Due: report", GoalID: "g-1", MemoryIDs: []string{}}}}}}
}

// The model's briefing comes back when it cites only ids of its input; the request carries
// the extractive items and the budget.
func TestWriteBriefing(t *testing.T) {
	srv, last := fakeChat(t, "Send the report today [goal g-1]. Acme now delivers in June [memory m-1].", 0)
	text, err := newTestLLM(t, srv.URL).WriteBriefing(context.Background(), testBriefing())
	if err != nil || !strings.Contains(text, "[memory m-1]") {
		t.Fatalf("briefing %q, %v", text, err)
	}
	if last.Model != "m" || last.MaxTokens != 200 || len(last.Messages) != 2 || !strings.Contains(last.Messages[1].Content, "[memory m-1]") ||
		last.ResponseFormat != nil {
		t.Fatalf("request %+v", last)
	}
}

// Answers that invent an id, cite nothing or are empty are refused with the reason; an
// unreachable server is EPROVIDER. (The word "memory" outside brackets is prose, not a citation.)
func TestWriteBriefingRefusals(t *testing.T) {
	for content, want := range map[string]string{
		"Acme delivers in June [memory m-2].":                "cites \"m-2\"",
		"Acme delivers in June; the memory of it is strong.": "cites no memory",
		"   ": "empty",
		strings.Repeat("word ", 300) + "[memory m-1]": "over the budget",
	} {
		srv, _ := fakeChat(t, content, 0)
		_, err := newTestLLM(t, srv.URL).WriteBriefing(context.Background(), testBriefing())
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("answer %.40q: err %v, want %q", content, err, want)
		}
	}
	srv, _ := fakeChat(t, "never", 100)
	_, err := newTestLLM(t, srv.URL).WriteBriefing(context.Background(), testBriefing())
	if e := knowmind.AsError(err); e == nil || e.Code != knowmind.EPROVIDER {
		t.Fatalf("server down: %v", err)
	}
}
