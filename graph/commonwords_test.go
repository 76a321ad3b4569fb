package graph_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/english"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/graph/dgraphtest"
	"github.com/knowmind/knowmind/search"
)

// With the installed English word levels (Debian's scowl), a question about a thing the tenant
// never wrote of gets no hit from a memory that shares one everyday word with it; a question
// the tenant's memories answer keeps its hits, as does a German question, and the rule off
// (Weights.CommonWords) gives the memory back.
func TestRecallLeavesOutEverydayWordHits(t *testing.T) {
	levels := english.SystemLevels()
	if levels.Len() == 0 {
		t.Skip("no English word levels at " + english.SystemDir + " (apt-get install scowl)")
	}
	c := dgraphtest.ClientWith(t, func(c *graph.Config) { c.WordLevels = levels })
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ten, err := c.Tenant(ctx, dgraphtest.TenantName(t), true)
	if err != nil {
		t.Fatal(err)
	}
	f := &recallFixture{t: t, ctx: ctx, ten: ten}
	moon := f.store("Promotion", "I'm over the moon about the promotion, we celebrated all weekend.")
	sign := f.store("Doctor", "The doctor said that sign looks serious, so I booked another appointment.")
	f.store("Hike", "We hiked up to the lake on Sunday and swam before lunch.")
	holiday := f.store("Urlaub", "Übrige Urlaubstage aus dem Vorjahr verfallen am 31. März.")
	john := f.store("Lease", "John called: the landlord wants an answer on the renewal by Friday.")

	for _, q := range []string{"How many moons does Neptune have?", "Who signed the Treaty of Westphalia?"} {
		if res := f.recall(knowmind.RecallQuery{Query: q, K: 5}); len(res.Hits) != 0 {
			t.Errorf("%q: hits %v, want none", q, hitIDs(res))
		}
	}
	off := search.Default()
	off.Weights.CommonWords = false
	if res := f.recallWith(knowmind.RecallQuery{Query: "How many moons does Neptune have?", K: 5}, off); !slices.Contains(hitIDs(res), moon) {
		t.Errorf("rule off: hits %v, want the moon memory back", hitIDs(res))
	}
	for q, want := range map[string]string{
		"What did I say about the moon?":                     moon, // no word rarer than moon the tenant never wrote
		"What did the doctor say about the sign?":            sign,
		"Wann verfallen übrige Urlaubstage aus dem Vorjahr?": holiday,
		"Wann verfallen die Urlaubstage?":                    holiday,
		// A name is never the everyday word, also where it starts the question.
		"John talked about Neptune?": john,
	} {
		if res := f.recall(knowmind.RecallQuery{Query: q, K: 5}); !slices.Contains(hitIDs(res), want) {
			t.Errorf("%q: hits %v, want %s", q, hitIDs(res), want)
		}
	}
}
