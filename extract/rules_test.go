package extract

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/knowmind/knowmind"
)

var defaultTypes = []string{"person", "organisation", "project", "place"}

func TestSentences(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"Das ist gut. Wir starten am 15. März mit z.B. zwei Teams. Fertig!", []string{"Das ist gut.", "Wir starten am 15. März mit z.B. zwei Teams.", "Fertig!"}},
		{"- erster Punkt\n- zweiter Punkt\n1. dritter", []string{"erster Punkt", "zweiter Punkt", "dritter"}},
		{"We met Dr. Smith on 2026-03-12. He agreed?! Yes.", []string{"We met Dr. Smith on 2026-03-12.", "He agreed?!", "Yes."}},
		{"Version 2.5 ist live. A. Schmidt kommt.", []string{"Version 2.5 ist live.", "A. Schmidt kommt."}},
		{"## Ergebnisse\nBudget steht", []string{"Ergebnisse", "Budget steht"}},
	}
	for _, tt := range tests {
		var got []string
		for _, s := range Sentences(tt.in) {
			got = append(got, s.Text)
			if r := []rune(tt.in); string(r[s.Span.Start:s.Span.End]) != s.Text {
				t.Errorf("%q: span %v gives %q", tt.in, s.Span, string(r[s.Span.Start:s.Span.End]))
			}
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("Sentences(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestRulesMeetingNote(t *testing.T) {
	text, err := os.ReadFile("testdata/meeting-de.txt")
	if err != nil {
		t.Fatal(err)
	}
	cands, err := Rules{}.Extract(context.Background(), knowmind.ExtractRequest{Text: string(text), EntityTypes: defaultTypes})
	if err != nil {
		t.Fatal(err)
	}
	byStart := map[string]knowmind.Candidate{}
	for _, c := range cands {
		t.Log(describe(c))
		byStart[strings.Join(strings.Fields(c.Text)[:2], " ")] = c
	}
	for _, dropped := range []string{"Hallo zusammen!", "Wer kümmert", "Ok.", "Bitte schickt", "Viele Grüße", "Das Design"} {
		if _, ok := byStart[strings.Join(strings.Fields(dropped)[:min(2, len(strings.Fields(dropped)))], " ")]; ok {
			t.Errorf("%q should be dropped", dropped)
		}
	}
	want := map[string]string{ // first two words → route under the default thresholds
		"Lisa Müller":            knowmind.RouteStored,
		"Wir haben":              knowmind.RouteDraft,
		"Die Acme":               knowmind.RouteStored,
		"Tom Schmidt":            knowmind.RouteDraft,
		"Vielleicht verschieben": knowmind.RouteDropped,
	}
	th := knowmind.Thresholds{Store: knowmind.DefaultStoreThreshold, Draft: knowmind.DefaultDraftThreshold}
	for start, route := range want {
		c, ok := byStart[start]
		if !ok {
			if route != knowmind.RouteDropped {
				t.Errorf("no candidate starting %q", start)
			}
			continue
		}
		if got := th.Route(c.Confidence); got != route {
			t.Errorf("%s: route %s, want %s", describe(c), got, route)
		}
	}
	lisa := byStart["Lisa Müller"]
	if !slices.Contains(lisa.Entities, knowmind.CandidateEntity{Type: "person", ID: "lisa-mueller", Name: "Lisa Müller"}) {
		t.Errorf("Lisa Müller not recognised: %v", lisa.Entities)
	}
	acme := byStart["Die Acme"]
	if len(acme.Entities) == 0 || acme.Entities[0].Type != "organisation" || acme.Entities[0].ID != "acme-gmbh" {
		t.Errorf("Acme GmbH not recognised: %v", acme.Entities)
	}
	r := []rune(string(text))
	for _, c := range cands {
		if string(r[c.Span.Start:c.Span.End]) != c.Text {
			t.Errorf("span %v of %q gives %q", c.Span, c.Text, string(r[c.Span.Start:c.Span.End]))
		}
	}
}

func TestRulesKnownEntities(t *testing.T) {
	known := []knowmind.Entity{{Type: "project", ID: "q3-relaunch", Name: "Q3-Relaunch", Aliases: []string{"Relaunch"}}}
	cands, _ := Rules{}.Extract(context.Background(), knowmind.ExtractRequest{
		Text: "The relaunch was postponed to 2026-07-01. Sounds good!", Known: known, EntityTypes: defaultTypes})
	if len(cands) != 1 {
		t.Fatalf("want one candidate, got %d", len(cands))
	}
	c := cands[0]
	if len(c.Entities) != 1 || c.Entities[0].ID != "q3-relaunch" || !slices.Contains(c.Features, "known_entity") {
		t.Fatalf("known entity by alias not found: %s", describe(c))
	}
	// known entity, date, decision: 0.35+0.2+0.1+0.15+0.25 = 1.05, capped
	if c.Confidence != rulesMax {
		t.Fatalf("confidence %.2f, want %.2f", c.Confidence, rulesMax)
	}
}

func TestEntitySlug(t *testing.T) {
	for in, want := range map[string]string{"Lisa Müller": "lisa-mueller", "Acme GmbH & Co. KG": "acme-gmbh-co-kg",
		"  Straße 5 ": "strasse-5", "tom.schmidt@acme.de": "tom-schmidt-acme-de"} {
		if got := knowmind.EntitySlug(in); got != want {
			t.Errorf("EntitySlug(%q) = %q, want %q", in, got, want)
		}
	}
}

// describe describes a candidate for test failures.
func describe(c knowmind.Candidate) string {
	return fmt.Sprintf("%q %.2f %v %v", c.Text, c.Confidence, c.Features, c.Entities)
}
