package handlers

import (
	"math"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/bm25"
)

// TestToolChoiceByDescription is a scripted stand-in for "does a model pick the right tool the
// first time" (no model runs in the tests): for typical agent intents it ranks the tools of the
// default toolset by BM25 of the intent against what tools/list shows of each tool (name, title,
// description) and asserts the intended tool ranks first. A description that loses says too
// little about when to use it rather than its neighbours. Run with -v to see the margins.
func TestToolChoiceByDescription(t *testing.T) {
	type doc struct {
		name  string
		terms map[string]int
		len   int
	}
	var docs []doc
	df := map[string]int{}
	total := 0
	for _, d := range toolList {
		if d.Toolset != "" && !slices.Contains(knowmind.DefaultToolsets, d.Toolset) {
			continue
		}
		text := strings.ReplaceAll(strings.TrimPrefix(d.Name, "knowmind_"), "_", " ") + " " + d.Title + " " + d.Description
		tokens := bm25.Analyze("en", text)
		tf := map[string]int{}
		for _, tok := range tokens {
			tf[tok]++
		}
		for tok := range tf {
			df[tok]++
		}
		docs = append(docs, doc{d.Name, tf, len(tokens)})
		total += len(tokens)
	}
	avg := float64(total) / float64(len(docs))
	rank := func(intent string) []struct {
		name  string
		score float64
	} {
		const k1, b = 1.2, 0.75
		var out []struct {
			name  string
			score float64
		}
		q := bm25.Analyze("en", intent)
		for _, d := range docs {
			s := 0.0
			for _, term := range q {
				f := float64(d.terms[term])
				if f == 0 {
					continue
				}
				idf := math.Log(1 + (float64(len(docs))-float64(df[term])+0.5)/(float64(df[term])+0.5))
				s += idf * f * (k1 + 1) / (f + k1*(1-b+b*float64(d.len)/avg))
			}
			out = append(out, struct {
				name  string
				score float64
			}{d.name, s})
		}
		sort.SliceStable(out, func(i, j int) bool { return out[i].score > out[j].score })
		return out
	}
	for _, c := range []struct{ intent, want string }{
		{"remember that the Acme contract ends in June", "knowmind_store_memory"},
		{"note for later: Lisa prefers email over phone", "knowmind_store_memory"},
		{"save these 30 facts from the meeting in one call", "knowmind_store_memories"},
		{"what did we decide about the database migration?", "knowmind_recall"},
		{"what do you know about Acme?", "knowmind_recall"},
		{"answer from memory: who owns the Apollo project?", "knowmind_recall"},
		{"what was true in March about the office address?", "knowmind_recall_at_time"},
		{"what did we know on 14 March, before the change?", "knowmind_recall_at_time"},
		{"link the Apollo memory to the Lisa Meyer memory", "knowmind_link"},
		{"relate memory A to memory B: A depends on B", "knowmind_link"},
		{"remove the wrong link between A and B", "knowmind_unlink"},
		{"the customer moved: change their address", "knowmind_update_fact"},
		{"the deadline is now July instead of May, correct the fact", "knowmind_update_fact"},
		{"ingest the 40-page handbook as a long text", "knowmind_upload_document"},
		{"which memories is this one related to?", "knowmind_list_relations"},
		{"show the graph around this memory with its neighbours", "knowmind_explore"},
		{"show this fact's version chain as it was then", "knowmind_explore"},
		{"what was stored lately? browse the newest entries", "knowmind_list_recent"},
		{"how many memories and chunks are in the workspace?", "knowmind_stats"},
		{"is the service up, which version runs?", "knowmind_health"},
	} {
		r := rank(c.intent)
		if r[0].name != c.want {
			t.Errorf("%q: %s ranks first (%.2f), want %s; ranking %v", c.intent, r[0].name, r[0].score, c.want, r[:3])
			continue
		}
		t.Logf("%-62q %-26s %.2f (next %s %.2f)", c.intent, c.want, r[0].score, r[1].name, r[1].score)
	}
}
